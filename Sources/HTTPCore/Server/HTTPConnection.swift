import Dispatch
import Glibc
import Synchronization

/// One client connection of the server: it reads bytes into the parser,
/// hands one request at a time to the responder, writes the answers in
/// order, and carries out what `ConnectionStateMachine` decides.
///
/// One thread at a time runs the connection (`run`), one of the server's
/// `ConnectionWorkers`: the one that took its socket's readiness event
/// (read interest while the state machine wants input, write interest only
/// while output waits; registered one-shot and re-armed after each run),
/// or the one that took it from the ready queue after another thread
/// scheduled work for it (an answer given later, a stream's piece, the
/// timer, shutdown). Socket calls never block, so a stalled client holds
/// up no thread; the responder runs on the worker and may block only
/// inside `RequestContext.whileBlockingAllowed`.
///
/// The use of `@unchecked Sendable` is safe for this type because: every
/// mutable stored property but `mailbox` is read and written only by the
/// thread running the connection, and one thread runs it at a time (the
/// `mailbox` lock's `running` flag hands it from one to the next, with the
/// lock's ordering between them); `closeWatch` is a `Mutex`-guarded
/// Sendable class.
final class HTTPConnection: @unchecked Sendable {
    private struct PendingExchange {
        var end: Int
        var exchange: HTTPExchange
        var started: UInt64
    }

    /// What other threads hand the connection, and whether a thread runs it.
    private struct Mailbox {
        var running = false
        /// Readiness events taken from epoll and not yet handled; any means
        /// the one-shot registration fired and is disarmed.
        var events: UInt32 = 0
        var tasks: [@Sendable () -> Void] = []
    }

    let id: Int
    let remoteAddress: String
    /// `remoteAddress` without the port, for the access log.
    private let peerHost: String
    private let socket: Socket
    private let responder: any HTTPResponder
    private let observer: (any HTTPServerObserver)?
    private let onClosed: @Sendable (HTTPConnection) -> Void

    private var parser: RequestParser
    private var machine: ConnectionStateMachine
    private var output: [UInt8] = []
    private var outputOffset = 0
    private var bytesQueued = 0
    private var bytesWritten = 0
    private var exchanges: [PendingExchange] = []
    /// The streamed answer being written (`HTTPResponseStream`), if any.
    private var stream: HTTPResponseStream?
    /// A stream's `drained` handlers, each with where its bytes end (in
    /// bytes queued since the connection opened).
    private var streamDrains: [(end: Int, handler: @Sendable (Bool) -> Void)] = []

    private let workers: ConnectionWorkers
    private let mailbox = Mutex(Mailbox())
    /// The workers' name for this connection, once attached.
    private var token: UInt64?
    /// The socket is in the workers' epoll set.
    private var isRegistered = false
    /// The interest the one-shot registration is armed with (0: disarmed).
    private var armedEvents: UInt32 = 0
    private var wantsWrite = false
    private var timer: (any DispatchSourceTimer)?
    private var timerScheduledAt: UInt64?
    private var isClosed = false
    private let closeWatch = CloseWatch()

    init(id: Int, socket: Socket, remoteAddress: String, peerHost: String, workers: ConnectionWorkers, limits: HTTPLimits,
         responder: any HTTPResponder, observer: (any HTTPServerObserver)?,
         onClosed: @escaping @Sendable (HTTPConnection) -> Void) {
        self.id = id
        self.socket = socket
        self.remoteAddress = remoteAddress
        self.peerHost = peerHost
        self.workers = workers
        self.responder = responder
        self.observer = observer
        self.onClosed = onClosed
        parser = RequestParser(limits: limits)
        machine = ConnectionStateMachine(now: Self.now(), timeouts: .init(limits: limits),
                                         outputBudget: limits.outputBudget)
    }

    static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    /// Joins the workers' epoll set and starts reading.
    func start() {
        schedule { [self] in
            guard !isClosed else { return }
            token = workers.attach(self)
            let timer = DispatchSource.makeTimerSource(queue: .global())
            // A strong reference, on purpose: the server's table holds the
            // connection until `close`, which cancels the timer, and a
            // cancelled source lets go of its handler. A weak one would give
            // the connection a side table, and the retains and releases of
            // every request would all take the slow path.
            timer.setEventHandler { [self] in
                schedule { [self] in timerFired() }
            }
            self.timer = timer
            timer.activate()
            updateInterest()
        }
    }

    // MARK: - Running

    /// Runs `task` on the connection, after what it is doing now: on this
    /// thread's way out if a thread runs it, else on a worker.
    func schedule(_ task: @escaping @Sendable () -> Void) {
        if post({ $0.tasks.append(task) }) { workers.makeReady(self) }
    }

    /// A worker took `events` (epoll flags) for the socket from the set:
    /// it runs the connection now, unless another thread does, which then
    /// handles them before it lets go.
    func deliver(_ events: UInt32) {
        if post({ $0.events |= events }) { run() }
    }

    /// Events a worker took for the socket but hands on before it blocks:
    /// the thread running the connection handles them, or a worker from
    /// the ready queue does.
    func deliverElsewhere(_ events: UInt32) {
        if post({ $0.events |= events }) { workers.makeReady(self) }
    }

    /// Puts work in the mailbox and marks the connection running; true
    /// when no thread ran it, so the caller must see that one does.
    private func post(_ work: (inout Mailbox) -> Void) -> Bool {
        mailbox.withLock { mailbox in
            work(&mailbox)
            defer { mailbox.running = true }
            return !mailbox.running
        }
    }

    /// Handles what the mailbox holds until it is empty, re-arming the
    /// socket's registration after each round. The caller set `running`.
    func run() {
        while true {
            let work: (events: UInt32, tasks: [@Sendable () -> Void])? = mailbox.withLock { mailbox in
                guard mailbox.events != 0 || !mailbox.tasks.isEmpty else {
                    mailbox.running = false
                    return nil
                }
                defer {
                    mailbox.events = 0
                    mailbox.tasks = []
                }
                return (mailbox.events, mailbox.tasks)
            }
            guard let work else { return }
            if work.events != 0 {
                armedEvents = 0
                handleEvents(work.events)
            }
            for task in work.tasks { task() }
            updateInterest()
        }
    }

    // MARK: - Reading

    /// The socket reported `events` (epoll flags). An error or hang-up goes
    /// to whichever side the connection waits on: its system call reports
    /// it. Events for a side it no longer waits on are stale and dropped.
    private func handleEvents(_ events: UInt32) {
        let failure = events & (Epoll.error | Epoll.hangUp) != 0
        if wantsWrite && (events & Epoll.writable != 0 || failure) {
            writable()
        }
        if !isClosed && machine.shouldRead(bufferedInput: parser.bufferedByteCount)
            && (events & Epoll.readable != 0 || failure) {
            readable()
        }
    }

    private func readable() {
        guard !isClosed else { return }
        let now = Self.now()
        var endOfInput = false
        var failed = false
        withUnsafeTemporaryAllocation(byteCount: 16 * 1024, alignment: 16) { buffer in
            for _ in 0..<8 {
                do {
                    guard let count = try socket.receive(into: buffer) else { break }
                    if count == 0 {
                        endOfInput = true
                        break
                    }
                    if machine.parsesInput {
                        parser.append(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
                    }
                    if count < buffer.count || !machine.shouldRead(bufferedInput: parser.bufferedByteCount) { break }
                } catch {
                    failed = true
                    break
                }
            }
        }
        if failed {
            close()
            return
        }
        processInput(now: now)
        if endOfInput && !isClosed {
            let buffered = parser.bufferedByteCount > 0
            execute(machine.inputEnded(now: now, bufferedInput: buffered), now: now)
            // Requests received whole before the end are still answered.
            if buffered { processInput(now: now) }
            flush(now: now)
        }
        updateInterest()
    }

    /// Parses and dispatches buffered requests while the connection may take
    /// one, then writes what was queued.
    private func processInput(now: UInt64) {
        while !isClosed && machine.canTakeRequest {
            if parser.bufferedByteCount > 0 { machine.requestBytesBuffered(now: now) }
            let progress: RequestParser.Progress
            do {
                progress = try parser.next()
            } catch {
                execute(machine.parseFailed(error, now: now), now: now)
                break
            }
            switch progress {
            case .needMore:
                if parser.hasPartialRequest { machine.partialRequestBuffered(now: now) }
                // A half-closed peer's last buffered request was answered.
                if machine.inputClosed { execute(machine.bufferedInputEnded(now: now), now: now) }
                flush(now: now)
                return
            case .headComplete(let head):
                machine.partialRequestBuffered(now: now)
                let line = ConnectionStateMachine.RequestLine(method: head.request.method.rawValue,
                                                              target: head.request.target)
                execute(machine.headReceived(line, now: now, expectsContinue: head.expectsContinue), now: now)
            case .complete(let head):
                // An answer already queued goes out before the next
                // pipelined request runs: that one may block in a read, and
                // its client has waited for the earlier answer long enough.
                if outputOffset < output.count {
                    flush(now: now)
                    guard !isClosed else { return }
                }
                dispatch(head, now: now)
            }
        }
        flush(now: now)
        resumeAfterOutputDrained()
    }

    /// The loop above stops at the output budget. When the socket
    /// then took all of that output at once, no write-ready event will come
    /// and the requests already buffered would wait for input that may
    /// never arrive; so they are taken up again, as scheduled work.
    private func resumeAfterOutputDrained() {
        guard !isClosed, machine.resumeNeeded(bufferedInput: parser.bufferedByteCount) else { return }
        schedule { [self] in
            machine.resumeStarted()
            guard !isClosed else { return }
            processInput(now: Self.now())
            updateInterest()
        }
    }

    /// Hands a whole request to the responder. An answer it has at once is
    /// written in this same run; a later one comes back through `respond`,
    /// from any thread, as scheduled work.
    private func dispatch(_ head: RequestHead, now: UInt64) {
        let request = head.request
        let line = ConnectionStateMachine.RequestLine(method: request.method.rawValue, target: request.target)
        let number = machine.requestReceived(line, isHead: request.method == .head, version: request.version,
                                             keepAlive: head.keepAlive, now: now).number
        closeWatch.beginRequest(number)
        let context = ConnectionContext(remoteAddress: remoteAddress, watch: closeWatch, requestNumber: number,
                                        workers: workers)
        let result = responder.handle(request, context: context) { [self] response in
            schedule { [self] in
                let now = Self.now()
                answer(number, response, now: now)
                processInput(now: now)
                updateInterest()
            }
        }
        switch result {
        case .response(let response): answer(number, response, now: Self.now())
        case .later: break
        }
    }

    /// Queues the answer to request `number`, unless the connection closed under it.
    private func answer(_ number: Int, _ response: HTTPResponse, now: UInt64) {
        guard !isClosed else { return }
        let streamed = response.stream
        switch machine.answerReady(for: number, now: now, bufferedInput: parser.bufferedByteCount > 0,
                                   streaming: streamed != nil) {
        case .drop:
            streamed?.attach(nil)
            return
        case .write(let request, let closeAfter):
            // A stream's handler still needs to hear that the peer left.
            if streamed == nil { closeWatch.requestAnswered() }
            let header: ResponseSerializer.ConnectionHeader =
                closeAfter ? .close : (request.version == .http1_0 ? .keepAlive : .none)
            enqueue(response, omitBody: request.isHead, connection: header,
                    method: request.line.method, target: request.line.target, started: request.started, now: now)
            if let streamed {
                if machine.isStreaming {
                    stream = streamed
                    streamed.attach(self)
                } else {
                    streamed.attach(nil)  // HEAD: the head only
                }
            }
        }
    }

    // MARK: - Streamed answers

    /// A piece of the streamed answer, run on the connection (`HTTPResponseStream.write`).
    func streamWrite(_ bytes: [UInt8], drained: (@Sendable (Bool) -> Void)?) {
        guard !isClosed, machine.isStreaming else {
            drained?(false)
            return
        }
        let now = Self.now()
        dropWrittenOutput()
        output.append(contentsOf: bytes)
        bytesQueued += bytes.count
        machine.outputQueued(bytes.count, now: now)
        if let drained { streamDrains.append((end: bytesQueued, handler: drained)) }
        flush(now: now)
        updateInterest()
    }

    /// The streamed answer is complete, run on the connection: close once it is written.
    func streamFinish() {
        guard !isClosed, machine.isStreaming else { return }
        let now = Self.now()
        closeWatch.requestAnswered()
        execute(machine.streamEnded(now: now), now: now)
        flush(now: now)
        updateInterest()
    }

    /// Runs the `drained` handlers whose bytes have all reached the socket
    /// (all of them with `false` once the connection is closed).
    private func reportStreamDrains() {
        guard !streamDrains.isEmpty else { return }
        let ready: [(end: Int, handler: @Sendable (Bool) -> Void)]
        if isClosed {
            ready = streamDrains
            streamDrains = []
        } else {
            let count = streamDrains.prefix { $0.end <= bytesWritten }.count
            guard count > 0 else { return }
            ready = Array(streamDrains.prefix(count))
            streamDrains.removeFirst(count)
        }
        for drain in ready { drain.handler(!isClosed) }
    }

    private func enqueue(_ response: HTTPResponse, omitBody: Bool, connection: ResponseSerializer.ConnectionHeader,
                       method: String, target: String, started: UInt64, now: UInt64) {
        dropWrittenOutput()
        let before = output.count
        ResponseSerializer.append(response, omitBody: omitBody, connection: connection, to: &output)
        let count = output.count - before
        bytesQueued += count
        machine.outputQueued(count, now: now)
        let code = response.status.code
        let bodyBytes = omitBody || code < 200 || code == 204 || code == 304 ? 0 : response.body.count
        if observer != nil {
            exchanges.append(PendingExchange(
                end: bytesQueued,
                exchange: HTTPExchange(method: method, target: target, status: code, bytes: bodyBytes,
                                       microseconds: 0, route: response.route, client: response.client ?? peerHost),
                started: started))
        }
    }

    // MARK: - Writing

    /// Frees the bytes already written before more are queued behind them.
    /// Without it a client that reads just enough to keep the output below
    /// the budget, never all of it, would grow `output` by an answer each
    /// time while the memory held for it stays written and useless; with it
    /// `output` holds at most the budget plus one answer. Costs a copy of
    /// the unwritten bytes (under the budget) only when the socket took part
    /// of the output and left the rest.
    private func dropWrittenOutput() {
        guard outputOffset > 0 else { return }
        output.removeFirst(outputOffset)
        outputOffset = 0
    }

    private func flush(now: UInt64) {
        guard !isClosed else { return }
        var written = 0
        while outputOffset < output.count {
            let result: Int?
            do {
                let offset = outputOffset
                result = try output.withUnsafeBytes { (bytes) throws(SocketError) -> Int? in
                    try socket.send(UnsafeRawBufferPointer(rebasing: bytes[offset...]))
                }
            } catch {
                close()  // EPIPE, ECONNRESET: the peer is gone
                return
            }
            guard let result else { break }
            outputOffset += result
            written += result
        }
        if outputOffset == output.count && outputOffset > 0 {
            output.removeAll(keepingCapacity: output.capacity <= 64 * 1024)
            outputOffset = 0
        }
        if written > 0 {
            bytesWritten += written
            // A fresh reading, not `now`: that is when this batch of events
            // started, before the handler ran, so a synchronous answer would
            // be reported as taking no time at all.
            reportExchanges(now: Self.now())
            execute(machine.outputWritten(written, now: now), now: now)
        }
        guard !isClosed else { return }
        wantsWrite = outputOffset < output.count
        applyInterest()
        // Last: a handler may write the next piece, which flushes again.
        reportStreamDrains()
    }

    private func reportExchanges(now: UInt64) {
        guard let observer, !exchanges.isEmpty else { return }
        var reported = 0
        for pending in exchanges {
            guard pending.end <= bytesWritten else { break }
            var exchange = pending.exchange
            exchange.microseconds = Int((now &- pending.started) / 1000)
            observer.exchangeCompleted(exchange)
            reported += 1
        }
        exchanges.removeFirst(reported)
    }

    private func writable() {
        guard !isClosed else { return }
        let now = Self.now()
        flush(now: now)
        processInput(now: now)
        updateInterest()
    }

    // MARK: - Actions

    private func execute(_ action: ConnectionStateMachine.HeadAction, now: UInt64) {
        switch action {
        case .none:
            break
        case .sendContinue:
            dropWrittenOutput()
            output.append(contentsOf: ResponseSerializer.continueHead)
            bytesQueued += ResponseSerializer.continueHead.count
            machine.outputQueued(ResponseSerializer.continueHead.count, now: now)
        }
    }

    private func execute(_ action: ConnectionStateMachine.ParseFailureAction, now: UInt64) {
        switch action {
        case .fail(let failure): answer(failure, now: now)
        }
    }

    private func execute(_ action: ConnectionStateMachine.WriteAction, now: UInt64) {
        switch action {
        case .none: break
        case .startLinger: socket.shutdownOutput()
        case .close: close()
        }
    }

    private func execute(_ action: ConnectionStateMachine.InputEndAction, now: UInt64) {
        switch action {
        case .none: break
        case .close: close()
        case .notifyPeerGone: for handler in closeWatch.takeHandlers(closing: false) { handler() }
        case .fail(let failure): answer(failure, now: now)
        }
    }

    private func execute(_ action: ConnectionStateMachine.TimerAction, now: UInt64) {
        switch action {
        case .none: break
        case .close: close()
        case .abort: close(reset: true)
        case .fail(let failure): answer(failure, now: now)
        }
    }

    private func execute(_ action: ConnectionStateMachine.ShutdownAction, now: UInt64) {
        switch action {
        case .none: break
        case .close: close()
        }
    }

    /// Answers a request the server refuses itself, with `Connection: close`.
    private func answer(_ failure: ConnectionStateMachine.Failure, now: UInt64) {
        let line = failure.line ?? parser.bufferedRequestLine.map {
            ConnectionStateMachine.RequestLine(method: $0.method, target: $0.target)
        }
        enqueue(responder.errorResponse(for: .malformedRequest(failure.error)), omitBody: false, connection: .close,
                method: line?.method ?? "", target: line?.target ?? "", started: failure.started, now: now)
        flush(now: now)
    }

    /// Keeps the read interest and the timer in line with the state machine.
    private func updateInterest() {
        guard !isClosed, token != nil else { return }
        applyInterest()
        scheduleTimer()
    }

    /// Arms the one-shot registration with what the connection waits for
    /// now. Costs no system call when it is armed with that already (work
    /// that came through the mailbox, not an event); after an event it is
    /// disarmed, and re-armed here. Waiting for nothing, it is armed for
    /// errors and hang-ups alone, which report once and disarm it, so a
    /// hang-up the connection cannot act on yet wakes no thread twice.
    private func applyInterest() {
        guard !isClosed, let token else { return }
        var wanted: UInt32 = wantsWrite ? Epoll.writable : 0
        if machine.shouldRead(bufferedInput: parser.bufferedByteCount) { wanted |= Epoll.readable }
        if isRegistered && wanted == armedEvents { return }
        if !isRegistered && wanted == 0 { return }
        do {
            try workers.control(isRegistered ? .modify : .add, fd: socket.descriptor,
                                events: wanted | Epoll.oneShot, token: token)
            isRegistered = true
            armedEvents = wanted
        } catch {
            close()
        }
    }

    /// Moves the timer only when a deadline comes earlier than the one it is
    /// set for; a later deadline is found when the early firing finds nothing
    /// expired, so a keep-alive request costs no timer call.
    private func scheduleTimer() {
        guard let timer, let deadline = machine.deadline else { return }
        if let scheduled = timerScheduledAt, scheduled <= deadline { return }
        timerScheduledAt = deadline
        timer.schedule(deadline: DispatchTime(uptimeNanoseconds: deadline), leeway: .milliseconds(10))
    }

    private func timerFired() {
        guard !isClosed else { return }
        timerScheduledAt = nil
        let now = Self.now()
        execute(machine.timerFired(now: now), now: now)
        updateInterest()
    }

    // MARK: - Server calls

    /// Shutdown: idle connections close now, busy ones after their answer.
    func beginShutdown() {
        schedule { [self] in
            guard !isClosed else { return }
            let now = Self.now()
            execute(machine.shutdownRequested(), now: now)
            flush(now: now)
            updateInterest()
        }
    }

    /// The grace period is over: close whatever state the connection is in.
    func forceClose() {
        schedule { [self] in close() }
    }

    // MARK: - Closing

    /// Closes once: leaves the epoll set, cancels the timer, closes the socket
    /// (with a reset when `reset`), and runs the pending request's `onClose` handlers.
    private func close(reset: Bool = false) {
        guard !isClosed else { return }
        isClosed = true
        machine.closed()
        for handler in closeWatch.takeHandlers(closing: true) { handler() }
        stream?.connectionClosed()
        stream = nil
        reportStreamDrains()
        timer?.cancel()
        timer = nil
        if let token {
            // Closing the descriptor drops its registration too, but only once
            // no other descriptor shares the open file; say it explicitly.
            if isRegistered {
                try? workers.control(.delete, fd: socket.descriptor, events: 0, token: token)
            }
            isRegistered = false
            armedEvents = 0
            workers.detach(token)
        }
        finalClose(reset: reset)
    }

    private func finalClose(reset: Bool) {
        guard socket.isOpen else { return }
        if reset { socket.abort() } else { socket.close() }
        output = []
        exchanges = []
        onClosed(self)
    }
}
