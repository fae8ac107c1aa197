/// The protocol logic of one server connection as a pure value: which phase
/// it is in, which deadline applies, whether it stays open after an answer,
/// and when to stop reading. It never touches a socket or a clock: every
/// event carries `now` (monotonic nanoseconds), and it answers with an
/// `Action` for `HTTPConnection` to carry out, so tests drive it with made-up
/// instants and no sleep (the shape of Hummingbird's
/// `HTTPConnectionStateHandler`).
///
/// Phases of one request: `idle` → `readingHead` (first byte arrived) →
/// `readingBody` (head complete, body pending) → `handling` (one request with
/// the responder; pipelined ones wait in the parser's buffer) → `idle` again,
/// or `closing` (flushing the last answer) → `lingering` (output shut down,
/// input drained so the peer is not reset before it reads the answer) → `closed`.
struct ConnectionStateMachine: Sendable {
    enum Phase: Hashable, Sendable {
        case idle
        case readingHead
        case readingBody
        case handling
        case closing
        case lingering
        case closed
    }

    enum Action: Hashable, Sendable {
        case none
        /// Write `100 Continue` now.
        case sendContinue
        /// Answer with the error's response and `Connection: close`.
        case fail(RequestParseError)
        /// Close the socket now, without an answer.
        case close
        /// Everything is written: shut down output and drain input until end
        /// of input or the linger deadline.
        case startLinger
        /// The peer ended its input while a handler works: tell the handler
        /// (RequestContext.onClose) so a long-poll stops waiting.
        case notifyPeerGone
    }

    /// The deadlines, in nanoseconds.
    struct Timeouts: Hashable, Sendable {
        var head: UInt64
        var body: UInt64
        var idle: UInt64
        /// How long queued output may go without progress before the
        /// connection is dropped (a client that never reads).
        var write: UInt64
        /// How long input is drained after the last answer of a closing connection.
        var linger: UInt64

        init(limits: HTTPLimits, linger: Duration = .seconds(2)) {
            head = Self.nanoseconds(limits.headTimeout)
            body = Self.nanoseconds(limits.bodyTimeout)
            idle = Self.nanoseconds(limits.idleTimeout)
            write = Self.nanoseconds(limits.idleTimeout)
            self.linger = Self.nanoseconds(linger)
        }

        static func nanoseconds(_ duration: Duration) -> UInt64 {
            let (seconds, attoseconds) = duration.components
            return UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000)
        }
    }

    private(set) var phase = Phase.idle
    private var phaseStart: UInt64
    private var requestsReceived = 0
    /// Whether the request being handled allows another after it.
    private(set) var keepAlive = true
    private(set) var isShuttingDown = false
    private(set) var inputClosed = false
    private(set) var pendingOutputBytes = 0
    private var lastWriteProgress: UInt64
    let timeouts: Timeouts
    /// Past this much unwritten output, no further request is taken and
    /// nothing more is read: a client that does not read cannot grow memory.
    let outputHighWater: Int
    /// While a request is handled, reading stops once this much of the next
    /// (pipelined) input is buffered.
    let inputHighWater: Int

    init(now: UInt64, timeouts: Timeouts, outputHighWater: Int = 256 * 1024, inputHighWater: Int = 64 * 1024) {
        phaseStart = now
        lastWriteProgress = now
        self.timeouts = timeouts
        self.outputHighWater = outputHighWater
        self.inputHighWater = inputHighWater
    }

    // MARK: - Reading

    /// Bytes of an incomplete request are buffered: its head timeout starts.
    mutating func partialRequestBuffered(now: UInt64) {
        if phase == .idle {
            phase = .readingHead
            phaseStart = now
        }
    }

    /// The head is complete and its body is still to come.
    mutating func headReceived(now: UInt64, expectsContinue: Bool) -> Action {
        guard phase == .idle || phase == .readingHead else { return .none }
        phase = .readingBody
        phaseStart = now
        return expectsContinue ? .sendContinue : .none
    }

    /// A whole request goes to the responder; nothing else is parsed until it is answered.
    mutating func requestReceived(keepAlive: Bool) {
        self.keepAlive = keepAlive
        requestsReceived += 1
        phase = .handling
    }

    /// Whether another request may be parsed and dispatched now.
    var canTakeRequest: Bool {
        switch phase {
        case .idle, .readingHead, .readingBody: pendingOutputBytes < outputHighWater
        default: false
        }
    }

    /// Whether the socket should be read now (the read source resumed).
    func shouldRead(bufferedInput: Int) -> Bool {
        switch phase {
        case .closed, .closing:
            return false
        case .lingering:
            return !inputClosed
        case .handling:
            return !inputClosed && pendingOutputBytes < outputHighWater && bufferedInput < inputHighWater
        case .idle, .readingHead, .readingBody:
            return !inputClosed && pendingOutputBytes < outputHighWater
        }
    }

    // MARK: - Answering

    /// The handler's response is about to be queued: returns true when the
    /// connection closes after it (its head then says `Connection: close`).
    /// `bufferedInput`: bytes of further requests are waiting in the parser;
    /// a peer that half-closed after pipelining them is still answered for
    /// each (RFC 9112 §9.3.2: its input ended, its requests did not vanish).
    mutating func responseReady(now: UInt64, bufferedInput: Bool = false) -> Bool {
        guard phase == .handling else { return true }
        let close = !keepAlive || isShuttingDown || (inputClosed && !bufferedInput)
        if close {
            phase = .closing
        } else {
            phase = .idle
            phaseStart = now
        }
        return close
    }

    /// The request cannot be parsed (or timed out): answer it, then close.
    mutating func parseFailed(_ error: RequestParseError) -> Action {
        guard phase != .closed && phase != .closing && phase != .lingering else { return .none }
        keepAlive = false
        phase = .closing
        return .fail(error)
    }

    mutating func outputQueued(_ count: Int, now: UInt64) {
        if pendingOutputBytes == 0 { lastWriteProgress = now }
        pendingOutputBytes += count
    }

    /// `count` bytes reached the socket; when a closing connection has written
    /// everything, it lingers (or closes at once if the peer's input is gone).
    mutating func outputWritten(_ count: Int, now: UInt64) -> Action {
        pendingOutputBytes -= count
        if count > 0 { lastWriteProgress = now }
        guard pendingOutputBytes == 0, phase == .closing else { return .none }
        if inputClosed {
            phase = .closed
            return .close
        }
        phase = .lingering
        phaseStart = now
        return .startLinger
    }

    // MARK: - Input end, timers, shutdown

    /// The peer sent end of input (it half-closed or went away).
    /// `bufferedInput`: the parser still holds bytes it has not taken (it
    /// stopped at the output high-water mark, or they are the start of a
    /// request). Whole requests among them are still answered, so the
    /// connection parses on and `bufferedInputEnded` decides once the parser
    /// runs dry.
    mutating func inputEnded(now: UInt64, bufferedInput: Bool = false) -> Action {
        guard !inputClosed else { return .none }
        inputClosed = true
        switch phase {
        case .idle, .readingHead, .readingBody:
            return bufferedInput ? .none : bufferedInputEnded(now: now)
        case .handling:
            phaseStart = now  // from now on, the idle timeout bounds the wait for the answer
            return .notifyPeerGone
        case .closing:
            return .none
        case .lingering:
            phase = .closed
            return .close
        case .closed:
            return .none
        }
    }

    /// The peer's input has ended and the parser holds no further complete
    /// request: close once the answers are written, or answer a request cut
    /// short with 400.
    mutating func bufferedInputEnded(now: UInt64) -> Action {
        guard inputClosed else { return .none }
        switch phase {
        case .idle:
            if pendingOutputBytes > 0 {
                phase = .closing
                return .none
            }
            phase = .closed
            return .close
        case .readingHead, .readingBody:
            return parseFailed(.truncatedRequest)
        case .handling, .closing, .lingering, .closed:
            return .none
        }
    }

    /// When the connection's timer should next fire, if any deadline applies.
    var deadline: UInt64? {
        var result: UInt64?
        switch phase {
        case .idle where pendingOutputBytes > 0:
            result = nil  // not idle while an answer is still being written
        case .idle: result = phaseStart + (requestsReceived == 0 ? timeouts.head : timeouts.idle)
        case .readingHead: result = phaseStart + timeouts.head
        case .readingBody: result = phaseStart + timeouts.body
        case .lingering: result = phaseStart + timeouts.linger
        case .handling where inputClosed:
            // Half-closed peers still get their answer, but a handler that
            // never answers a peer that left must not hold the socket forever.
            result = phaseStart + timeouts.idle
        case .handling, .closing, .closed: result = nil
        }
        if pendingOutputBytes > 0 && phase != .closed {
            let writeDeadline = lastWriteProgress + timeouts.write
            result = min(result ?? writeDeadline, writeDeadline)
        }
        return result
    }

    /// The timer fired: what, if anything, has expired.
    mutating func timerFired(now: UInt64) -> Action {
        guard let deadline, now >= deadline else { return .none }
        if pendingOutputBytes > 0 && now >= lastWriteProgress + timeouts.write {
            phase = .closed
            return .close
        }
        switch phase {
        case .idle where pendingOutputBytes > 0:
            return .none
        case .idle, .lingering:
            // A fresh connection that sent nothing, an idle keep-alive one, or
            // a linger that is over: nothing to answer, close quietly.
            phase = .closed
            return .close
        case .readingHead, .readingBody:
            return parseFailed(.requestTimeout)
        case .handling where inputClosed:
            phase = .closed
            return .close
        case .handling, .closing, .closed:
            return .none
        }
    }

    /// The server is shutting down: an idle connection closes now; a request
    /// under way is answered with `Connection: close`.
    mutating func shutdownRequested() -> Action {
        isShuttingDown = true
        guard phase == .idle else { return .none }
        if pendingOutputBytes > 0 {
            phase = .closing
            return .none
        }
        phase = .closed
        return .close
    }

    /// The socket was closed (for any reason).
    mutating func closed() {
        phase = .closed
    }
}
