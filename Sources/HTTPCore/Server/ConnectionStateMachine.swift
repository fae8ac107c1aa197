/// The protocol logic of one server connection as a pure value: which phase
/// it is in, which request it is answering, which deadline applies, whether
/// it stays open after an answer, and when to stop reading. It never touches
/// a socket or a clock: every event carries `now` (monotonic nanoseconds),
/// and each event answers with its own action type for `HTTPConnection` to
/// carry out, so tests drive it with made-up instants and no sleep (the
/// shape of Hummingbird's `HTTPConnectionStateHandler`). An event that
/// cannot happen in the current phase is a bug of the connection and stops
/// the process.
///
/// Phases of one request: `idle` → `readingHead` (first byte arrived) →
/// `readingBody` (head complete, body pending) → `handling` (one request with
/// the responder; pipelined ones wait in the parser's buffer) → `idle` again,
/// or `closing` (flushing the last answer) → `lingering` (output shut down,
/// input drained so the peer is not reset before it reads the answer) → `closed`.
/// A streamed answer (`HTTPResponseStream`) goes `handling` → `streaming`
/// (its body written over time, input only drained to see the peer leave)
/// → `closing` when the stream finishes: a stream never keeps the
/// connection alive after it.
struct ConnectionStateMachine: Sendable {
    /// Method and target of a request, for the log line of its answer.
    struct RequestLine: Hashable, Sendable {
        var method: String
        var target: String
    }

    /// A request with the responder: what its answer needs.
    struct HandledRequest: Hashable, Sendable {
        /// Counts the connection's requests from 1; a late answer names the
        /// request it is for, so an answer after the connection closed is dropped.
        var number: Int
        var line: RequestLine
        var isHead: Bool
        var version: HTTPVersion
        /// When its first byte arrived (or the previous answer freed the connection).
        var started: UInt64
    }

    /// A request the server answers itself with an error, then closes.
    struct Failure: Hashable, Sendable {
        var error: RequestParseError
        /// Known once the head was parsed; otherwise the connection reads it from the parser's buffer.
        var line: RequestLine?
        var started: UInt64
    }

    enum Phase: Hashable, Sendable {
        case idle
        case readingHead
        case readingBody(RequestLine)
        case handling(HandledRequest)
        /// The answer's head is out and its body is written over time.
        case streaming(HandledRequest)
        case closing
        case lingering
        case closed
    }

    /// After a complete head.
    enum HeadAction: Hashable, Sendable {
        case none
        /// Write `100 Continue` now.
        case sendContinue
    }

    /// After the responder's answer.
    enum AnswerAction: Hashable, Sendable {
        /// The connection closed, or the request was answered already: drop it.
        case drop
        /// Write it for `request`; with `Connection: close` when `closeAfter`.
        case write(request: HandledRequest, closeAfter: Bool)
    }

    /// After a request that cannot be parsed.
    enum ParseFailureAction: Hashable, Sendable {
        /// Answer with the error's response and `Connection: close`.
        case fail(Failure)
    }

    /// After output reached the socket.
    enum WriteAction: Hashable, Sendable {
        case none
        /// Everything is written: shut down output and drain input until end
        /// of input or the linger deadline.
        case startLinger
        /// Close the socket now.
        case close
    }

    /// After the peer ended its input.
    enum InputEndAction: Hashable, Sendable {
        case none
        /// Close the socket now, without an answer.
        case close
        /// The peer ended its input while a handler works: tell the handler
        /// (RequestContext.onClose) so a long-poll stops waiting.
        case notifyPeerGone
        /// A request was cut short: answer it, then close.
        case fail(Failure)
    }

    /// After the timer fired.
    enum TimerAction: Hashable, Sendable {
        case none
        /// Close the socket now, without an answer.
        case close
        /// An answer waited past the write timeout: reset the connection,
        /// dropping what is queued, which the client is not reading.
        case abort
        /// A request took too long to arrive: answer it, then close.
        case fail(Failure)
    }

    /// After the server asked to shut down.
    enum ShutdownAction: Hashable, Sendable {
        case none
        case close
    }

    /// The deadlines, in nanoseconds.
    struct Timeouts: Hashable, Sendable {
        var head: UInt64
        var body: UInt64
        var idle: UInt64
        /// How long a queued answer may wait to be written whole before the
        /// connection is dropped (a client that reads nothing, or a trickle).
        var write: UInt64
        /// How long input is drained after the last answer of a closing connection.
        var linger: UInt64

        init(limits: HTTPLimits, linger: Duration = .seconds(2)) {
            head = Self.nanoseconds(limits.headTimeout)
            body = Self.nanoseconds(limits.bodyTimeout)
            idle = Self.nanoseconds(limits.idleTimeout)
            write = Self.nanoseconds(limits.writeTimeout)
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
    /// When the request now being read began (its first byte, or when the
    /// previous answer freed the connection for a pipelined one).
    private var requestStart: UInt64?
    /// Whether the request being handled allows another after it.
    private(set) var keepAlive = true
    private(set) var isShuttingDown = false
    private(set) var inputClosed = false
    private(set) var pendingOutputBytes = 0
    /// A turn of the queue is booked to take up buffered pipelined requests.
    private(set) var resumeScheduled = false
    /// Each piece of output not yet written whole, oldest first: where it
    /// ends (in bytes queued since the connection opened) and when it was
    /// queued. The write deadline is the oldest one's instant plus the write
    /// timeout, so a trickle of reads, which writes part of it, never moves
    /// the deadline; only writing it whole does.
    private var unwrittenOutput: [(end: Int, queuedAt: UInt64)] = []
    private var bytesQueued = 0
    private var bytesWritten = 0
    let timeouts: Timeouts
    /// At this much unwritten output, no further request is taken and
    /// nothing more is read: a client that does not read cannot grow memory
    /// past the budget plus the one answer that crossed it.
    let outputBudget: Int
    /// While a request is handled, reading stops once this much of the next
    /// (pipelined) input is buffered.
    let inputHighWater: Int

    init(now: UInt64, timeouts: Timeouts, outputBudget: Int = HTTPLimits().outputBudget, inputHighWater: Int = 64 * 1024) {
        phaseStart = now
        self.timeouts = timeouts
        self.outputBudget = outputBudget
        self.inputHighWater = inputHighWater
    }

    private var isReading: Bool {
        switch phase {
        case .idle, .readingHead, .readingBody: true
        default: false
        }
    }

    // MARK: - Reading

    /// Bytes of a next request are in the parser's buffer: its exchange time starts now.
    mutating func requestBytesBuffered(now: UInt64) {
        if requestStart == nil { requestStart = now }
    }

    /// Bytes of an incomplete request are buffered: its head timeout starts.
    mutating func partialRequestBuffered(now: UInt64) {
        precondition(isReading, "partial request buffered while \(phase)")
        if phase == .idle {
            phase = .readingHead
            phaseStart = now
        }
    }

    /// The head is complete and its body is still to come.
    mutating func headReceived(_ line: RequestLine, now: UInt64, expectsContinue: Bool) -> HeadAction {
        switch phase {
        case .idle, .readingHead:
            phase = .readingBody(line)
            phaseStart = now
            return expectsContinue ? .sendContinue : .none
        default:
            preconditionFailure("request head received while \(phase)")
        }
    }

    /// A whole request goes to the responder; nothing else is parsed until it
    /// is answered. Returns what its answer needs.
    mutating func requestReceived(_ line: RequestLine, isHead: Bool, version: HTTPVersion, keepAlive: Bool,
                                  now: UInt64) -> HandledRequest {
        precondition(isReading && canTakeRequest, "request received while \(phase)")
        self.keepAlive = keepAlive
        requestsReceived += 1
        let request = HandledRequest(number: requestsReceived, line: line, isHead: isHead, version: version,
                                     started: requestStart ?? now)
        requestStart = nil
        phase = .handling(request)
        return request
    }

    /// Whether another request may be parsed and dispatched now.
    var canTakeRequest: Bool {
        isReading && pendingOutputBytes < outputBudget
    }

    /// Whether bytes read are parsed; a lingering connection only drains them.
    var parsesInput: Bool {
        switch phase {
        case .lingering, .streaming: false
        default: true
        }
    }

    /// Whether a streamed answer's body is being written.
    var isStreaming: Bool {
        if case .streaming = phase { true } else { false }
    }

    /// Whether the socket should be read now (the read source resumed).
    func shouldRead(bufferedInput: Int) -> Bool {
        switch phase {
        case .closed, .closing:
            return false
        case .lingering, .streaming:
            // Only drained: a streaming peer's end of input means it left.
            return !inputClosed
        case .handling:
            return !inputClosed && pendingOutputBytes < outputBudget && bufferedInput < inputHighWater
        case .idle, .readingHead, .readingBody:
            return !inputClosed && pendingOutputBytes < outputBudget
        }
    }

    /// Whether to book a later turn that takes up buffered requests: the
    /// connection stopped at the output budget and the socket then
    /// took everything, so no write-ready event will come to resume it.
    mutating func resumeNeeded(bufferedInput: Int) -> Bool {
        guard !resumeScheduled, canTakeRequest, bufferedInput > 0 else { return false }
        resumeScheduled = true
        return true
    }

    /// The booked turn came.
    mutating func resumeStarted() {
        precondition(resumeScheduled, "resume ran without being booked")
        resumeScheduled = false
    }

    // MARK: - Answering

    /// The responder answered request `number`. `bufferedInput`: bytes of
    /// further requests are waiting in the parser; a peer that half-closed
    /// after pipelining them is still answered for each (RFC 9112 §9.3.2:
    /// its input ended, its requests did not vanish).
    /// `streaming`: the answer's body follows over time (`streamEnded`
    /// ends it); it always closes the connection after it, and a HEAD
    /// request's stream closes at once after the head.
    mutating func answerReady(for number: Int, now: UInt64, bufferedInput: Bool = false,
                              streaming: Bool = false) -> AnswerAction {
        precondition(number <= requestsReceived, "answer for request \(number), only \(requestsReceived) received")
        guard case .handling(let request) = phase, request.number == number else {
            // The connection closed under the handler, or it answered twice.
            return .drop
        }
        if streaming && !request.isHead {
            keepAlive = false
            phase = .streaming(request)
            phaseStart = now
            return .write(request: request, closeAfter: true)
        }
        let close = streaming || !keepAlive || isShuttingDown || (inputClosed && !bufferedInput)
        if close {
            phase = .closing
        } else {
            phase = .idle
            phaseStart = now
        }
        return .write(request: request, closeAfter: close)
    }

    /// The request cannot be parsed: answer it, then close.
    mutating func parseFailed(_ error: RequestParseError, now: UInt64) -> ParseFailureAction {
        precondition(isReading, "parse failure while \(phase)")
        return .fail(fail(error, now: now))
    }

    private mutating func fail(_ error: RequestParseError, now: UInt64) -> Failure {
        var line: RequestLine?
        if case .readingBody(let head) = phase { line = head }
        let failure = Failure(error: error, line: line, started: requestStart ?? now)
        requestStart = nil
        keepAlive = false
        phase = .closing
        return failure
    }

    /// `count` bytes of one answer (or a `100 Continue`) were queued.
    mutating func outputQueued(_ count: Int, now: UInt64) {
        guard count > 0 else { return }
        pendingOutputBytes += count
        bytesQueued += count
        if let last = unwrittenOutput.last, last.queuedAt == now {
            unwrittenOutput[unwrittenOutput.count - 1].end = bytesQueued  // same instant, same deadline
        } else {
            unwrittenOutput.append((end: bytesQueued, queuedAt: now))
        }
    }

    /// When the write timeout closes the connection unless its oldest
    /// unwritten answer is written whole before; nil while nothing waits.
    var writeDeadline: UInt64? {
        unwrittenOutput.first.map { $0.queuedAt + timeouts.write }
    }

    /// `count` bytes reached the socket; when a closing connection has written
    /// everything, it lingers (or closes at once if the peer's input is gone).
    mutating func outputWritten(_ count: Int, now: UInt64) -> WriteAction {
        precondition(count <= pendingOutputBytes, "\(count) bytes written, \(pendingOutputBytes) queued")
        pendingOutputBytes -= count
        bytesWritten += count
        let done = unwrittenOutput.prefix { $0.end <= bytesWritten }.count
        if done == unwrittenOutput.count {
            unwrittenOutput.removeAll(keepingCapacity: true)
        } else if done > 0 {
            unwrittenOutput.removeFirst(done)
        }
        guard pendingOutputBytes == 0, phase == .closing else { return .none }
        return closeOrLinger(now: now)
    }

    /// A streamed answer's body is complete: close once it is written.
    mutating func streamEnded(now: UInt64) -> WriteAction {
        guard case .streaming = phase else { return .none }
        phase = .closing
        guard pendingOutputBytes == 0 else { return .none }
        return closeOrLinger(now: now)
    }

    /// Everything of a closing connection is written.
    private mutating func closeOrLinger(now: UInt64) -> WriteAction {
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
    /// stopped at the output budget, or they are the start of a
    /// request). Whole requests among them are still answered, so the
    /// connection parses on and `bufferedInputEnded` decides once the parser
    /// runs dry.
    mutating func inputEnded(now: UInt64, bufferedInput: Bool = false) -> InputEndAction {
        guard !inputClosed else { return .none }
        inputClosed = true
        switch phase {
        case .idle, .readingHead, .readingBody:
            return bufferedInput ? .none : bufferedInputEnded(now: now)
        case .handling:
            phaseStart = now  // from now on, the idle timeout bounds the wait for the answer
            return .notifyPeerGone
        case .closing, .closed:
            return .none
        case .lingering, .streaming:
            // A streaming peer that ends its input has left: nothing it
            // would read is worth writing.
            phase = .closed
            return .close
        }
    }

    /// The peer's input has ended and the parser holds no further complete
    /// request: close once the answers are written, or answer a request cut
    /// short with 400.
    mutating func bufferedInputEnded(now: UInt64) -> InputEndAction {
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
            return .fail(fail(.truncatedRequest, now: now))
        case .handling, .streaming, .closing, .lingering, .closed:
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
        case .handling, .streaming, .closing, .closed: result = nil
        }
        if let writeDeadline, phase != .closed {
            result = min(result ?? writeDeadline, writeDeadline)
        }
        return result
    }

    /// The timer fired: what, if anything, has expired.
    mutating func timerFired(now: UInt64) -> TimerAction {
        guard let deadline, now >= deadline else { return .none }
        if let writeDeadline, now >= writeDeadline {
            phase = .closed
            return .abort
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
            return .fail(fail(.requestTimeout, now: now))
        case .handling where inputClosed:
            phase = .closed
            return .close
        case .handling, .streaming, .closing, .closed:
            return .none
        }
    }

    /// The server is shutting down: an idle connection closes now; a request
    /// under way is answered with `Connection: close`.
    mutating func shutdownRequested() -> ShutdownAction {
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
