/// When a typing signal goes to the server, from the calls an app makes on
/// every keystroke: the contract's 2 s rule kept on the client's side.
///
/// The server drops (answers 204, never broadcasts) a caller's call within
/// 2 s of its last accepted one, and shows a `true` for 6 s. So:
/// - a `true` is sent when the last sent call was not a `true`, or was one
///   ``renewInterval`` (4 s) ago or more: typing goes on being shown while
///   keystrokes go on, and one call per 4 s is all it costs;
/// - a `false` is sent only after a `true` (the user stopped: the others'
///   typing row goes away now, not when it expires);
/// - nothing is sent within ``minimumInterval`` (2 s) of the last sent
///   call: the answer is to wait the rest, then send, if the same call is
///   still wanted then (a `false` right after a `true` would otherwise be
///   dropped by the server, and the row would stay for 6 s).
///
/// A value with pure decisions: the time is passed in, so tests need no clock.
public struct TypingThrottle: Hashable, Sendable {
    public enum Decision: Hashable, Sendable {
        /// Send now, then call ``TypingThrottle/didSend(_:at:)``.
        case send
        /// Ask again after this long (the 2 s rule).
        case wait(Duration)
        /// Nothing to send: the server already shows this.
        case skip
    }

    /// Default: 2 s, the server's quiet period.
    public var minimumInterval: Duration
    /// Default: 4 s, within the 6 s a `true` lasts.
    public var renewInterval: Duration
    /// The last call sent, and when.
    public private(set) var lastSent: Bool?
    public private(set) var lastSentAt: ContinuousClock.Instant?

    public init(minimumInterval: Duration = .seconds(2), renewInterval: Duration = .seconds(4)) {
        self.minimumInterval = minimumInterval
        self.renewInterval = renewInterval
    }

    /// What to do with the app's `typing` at `now`.
    public func decide(_ typing: Bool, at now: ContinuousClock.Instant) -> Decision {
        guard let lastSent, let lastSentAt else { return typing ? .send : .skip }
        let elapsed = now - lastSentAt
        if typing {
            if lastSent, elapsed < renewInterval { return .skip }
        } else if !lastSent {
            return .skip
        }
        return elapsed < minimumInterval ? .wait(minimumInterval - elapsed) : .send
    }

    /// `typing` was sent at `now`.
    public mutating func didSend(_ typing: Bool, at now: ContinuousClock.Instant) {
        lastSent = typing
        lastSentAt = now
    }

    /// The send failed: the next call decides as if nothing had been sent
    /// since `previous` (the state before ``didSend(_:at:)``).
    public mutating func restore(_ previous: TypingThrottle) {
        lastSent = previous.lastSent
        lastSentAt = previous.lastSentAt
    }
}
