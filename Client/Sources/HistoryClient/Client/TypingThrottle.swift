/// When a typing signal goes to the server, from the calls an app makes on
/// every keystroke: the contract's 2 s rule kept on the client's side.
///
/// The server drops a caller's call within 2 s of its last accepted one, a
/// `false` too, and answers it 204 like an accepted one (docs/API.md,
/// "Live"): a dropped `false` leaves the others' typing row for the rest of
/// the `true`'s 6 s, and the answer cannot tell the client to send it
/// again. So the client must never send into that quiet period:
/// - a `true` is sent when the last sent call was not a `true`, or was sent
///   ``renewInterval`` (4 s) ago or more: typing goes on being shown while
///   keystrokes go on, and one call per 4 s is all it costs;
/// - a `false` is sent only after a `true` (the user stopped: the others'
///   typing row goes away now, not when it expires);
/// - nothing is sent before the last call's answer arrived and
///   ``minimumInterval`` (2 s) more went by: the answer is to wait, then
///   send, if the same call is still wanted then.
///
/// The 2 s count from the answer, not from the send, because the server
/// counts them from the moment it accepted the call, which lies anywhere
/// between the two (a slow uplink, a busy server): counted from the send, a
/// `false` 2 s after a `true` that took 1 s to be accepted lands 1 s into
/// the quiet period and is dropped. The server accepts before it answers,
/// so a call sent 2 s after the answer comes 2 s after the acceptance or
/// more, whatever the latency; the price is the answer's trip. (Another
/// client of the same user, a second device, shares the server's quiet
/// period unseen: its calls can still make this one's be dropped.)
///
/// A call that failed without the server's answer (no answer, a gateway's
/// 5xx, cancellation) may still have been accepted, most likely by the
/// failure (a request a server takes up after the client gave up on it is
/// beyond what the client can know): ``didLoseAnswer(at:)`` counts the 2 s
/// from then and keeps a later `false` due. One the server refused (a 4xx)
/// changed nothing: ``restore(_:)``.
///
/// A value with pure decisions: the time is passed in, so tests need no clock.
public struct TypingThrottle: Hashable, Sendable {
    public enum Decision: Hashable, Sendable {
        /// Send now, then call ``TypingThrottle/didSend(_:at:)``, and
        /// ``TypingThrottle/didAnswer(at:)`` when the answer arrives.
        case send
        /// Ask again after this long (the 2 s rule; while the last call
        /// awaits its answer, the whole 2 s: at least that much is left).
        case wait(Duration)
        /// Nothing to send: the server already shows this.
        case skip
    }

    /// Default: 2 s, the server's quiet period.
    public var minimumInterval: Duration
    /// Default: 4 s, within the 6 s a `true` lasts.
    public var renewInterval: Duration
    /// The last call sent (after a lost answer: `true`, which the server
    /// may show), and when it was sent (nil after a lost answer: a `true`
    /// is due again).
    public private(set) var lastSent: Bool?
    public private(set) var lastSentAt: ContinuousClock.Instant?
    /// When the last call's answer arrived (or was given up): the start of
    /// the 2 s. Nil while that call awaits its answer.
    public private(set) var lastAnsweredAt: ContinuousClock.Instant?

    public init(minimumInterval: Duration = .seconds(2), renewInterval: Duration = .seconds(4)) {
        self.minimumInterval = minimumInterval
        self.renewInterval = renewInterval
    }

    /// What to do with the app's `typing` at `now`.
    public func decide(_ typing: Bool, at now: ContinuousClock.Instant) -> Decision {
        guard let lastSent else { return typing ? .send : .skip }
        if typing {
            if lastSent, let lastSentAt, now - lastSentAt < renewInterval { return .skip }
        } else if !lastSent {
            return .skip
        }
        guard let lastAnsweredAt else { return .wait(minimumInterval) }
        let elapsed = now - lastAnsweredAt
        return elapsed < minimumInterval ? .wait(minimumInterval - elapsed) : .send
    }

    /// `typing` was sent at `now`; its answer has not arrived yet.
    public mutating func didSend(_ typing: Bool, at now: ContinuousClock.Instant) {
        lastSent = typing
        lastSentAt = now
        lastAnsweredAt = nil
    }

    /// The server's answer to the last call sent arrived at `now`.
    public mutating func didAnswer(at now: ContinuousClock.Instant) {
        lastAnsweredAt = now
    }

    /// The last call sent failed at `now` without the server's answer: it
    /// may have been accepted, up to `now`. Whichever it was, the server
    /// may show a `true` (that call, or the one a lost `false` was to
    /// end), so a `false` is due, and so is a `true` (it may not be shown),
    /// both 2 s from `now`.
    public mutating func didLoseAnswer(at now: ContinuousClock.Instant) {
        lastSent = true
        lastSentAt = nil
        lastAnsweredAt = now
    }

    /// The send failed and the server surely changed nothing (it refused
    /// the call, or the call never left): the next call decides as if
    /// nothing had been sent since `previous` (the state before
    /// ``didSend(_:at:)``).
    public mutating func restore(_ previous: TypingThrottle) {
        lastSent = previous.lastSent
        lastSentAt = previous.lastSentAt
        lastAnsweredAt = previous.lastAnsweredAt
    }
}
