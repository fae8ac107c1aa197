import HTTPCore
import HistoryAccess
import HistoryStore
import Synchronization

/// Any `PolledFeed` as Server-Sent Events (docs/API.md, "Live"): the
/// long-poll's chain of store waits, but an answer never ends it; each
/// change goes out as `id: <cursor>`, `event: <type>`, `data: <the object
/// the long-poll's events array holds>`, in cursor order.
///
/// The life of a stream, one step at a time (never two reads, never two
/// writes at once):
/// 1. read after the cursor last sent; write what it found, in one piece
///    (at most about `ClientLimits.maximumResponseBytes`; the rest is read
///    once that piece reached the socket);
/// 2. nothing to write: park in the store until a commit may concern the
///    feed, or a heartbeat is due (`FeedSettings.heartbeatInterval`, a
///    comment line), or the stream's time is up;
/// 3. ends (`finish`, the connection then closes) when its time is up
///    (`FeedSettings.maximumStreamDuration`), when its caller loses access
///    (a removal, heard as long-polls hear it, or found by a read), when
///    the server drains, or when the connection closes (the client left, or
///    stopped reading and the write timeout cut it off).
///
/// Memory stays bounded whatever the client does: the next piece is read
/// only when the last one reached the socket, so a client that stops
/// reading holds one piece until the write timeout closes its connection,
/// and wakes meanwhile only mark that a read is due (the feed is
/// compacted: one read after the cursor catches up on all of them).
///
/// Other wake sources (typing) add their own events with `send(event:data:)`
/// and stop feeding a stream that ended with `onEnd`:
///
/// ```swift
/// let stream = EventStream(promise: promise, caller: caller, feed: source, environment: environment)
/// typing.subscribe(conversation) { list in stream.send(event: "typing", data: list.json) }
/// stream.onEnd { typing.unsubscribe(...) }
/// stream.start(first: snapshot)
/// ```
final class EventStream<Feed: PolledFeed>: ParkedPoll {
    private struct State: Sendable {
        /// The cursor of the last change sent (or the position read with nothing to send).
        var position: Int64 = 0
        /// The store wait in flight, if parked.
        var token: WaitToken?
        var parked = false
        /// A read or a write is in flight: no other starts until it is done.
        var busy = false
        /// The last read had more than one piece (`has_more`, or the byte cap).
        var more = false
        /// A wake came while busy: read once the piece is out.
        var wakePending = false
        /// Extra events waiting for the write in flight, latest per type.
        var extras: [ServerSentEvent] = []
        /// Counts parks, so a wait's late token never replaces a newer one's.
        var parks = 0
        var started = false
        var ended = false
        var endHandlers: [@Sendable () -> Void] = []
    }

    /// The stream's one answer: its head, or a 429.
    private let promise: AnswerPromise
    private let feed: Feed
    /// Whose parked-poll allowance this stream uses; nil for an admin token.
    let client: ClientKey?
    private let environment: RouteEnvironment
    private let deadline: ContinuousClock.Instant
    private let body = HTTPResponseStream()
    private let state = Mutex(State())

    init(promise: AnswerPromise, caller: Caller, feed: Feed, environment: RouteEnvironment) {
        self.promise = promise
        self.feed = feed
        self.environment = environment
        client = ClientKey(caller: caller, context: promise.request.context)
        deadline = .now + environment.feeds.maximumStreamDuration
    }

    // MARK: - For routes and other wake sources

    /// Answers 200 `text/event-stream` and sends `first` (the route's read
    /// after the client's cursor, which decided access and `since`), then
    /// follows the feed. Past the client's parked-poll allowance it answers
    /// 429 `too_many_requests` instead; on a draining server it sends
    /// `first` and ends.
    func start(first: Feed.Snapshot) {
        switch environment.longPolls.register(self) {
        case .parked:
            break
        case .draining:
            state.withLock { $0.ended = true }
        case .overClientLimit(let limit):
            state.withLock { $0.ended = true }
            environment.metrics.recordDenied(status: 429, code: ErrorCode.tooManyRequests.rawValue)
            promise.fail(APIError(.tooManyRequests,
                                  "this client already has \(limit) long-polls or streams waiting; close one before opening another"))
            runEndHandlers()
            return
        }
        promise.resolve(HTTPResponse(status: .ok, headers: [
            "Content-Type": "text/event-stream",
            "Cache-Control": "no-store",
            // nginx and its kin buffer a proxied body unless told not to.
            "X-Accel-Buffering": "no",
        ], stream: body))
        if state.withLock({ $0.ended }) {
            write(first)
            body.finish()
            runEndHandlers()
            return
        }
        promise.request.context.onClose { [self] in end() }
        // A removal that committed after the route's read but before the
        // stream was registered found nothing to revoke: look again.
        recheckMembership()
        state.withLock { state in
            state.started = true
            state.busy = true
        }
        deliver(first)
    }

    /// Sends an event that is not the feed's (`event: typing`), without an
    /// `id` so it moves no cursor: now, or once the piece on its way is
    /// out; one waiting with the same type is replaced (only the latest
    /// state of a list is news). Any thread; does nothing once ended.
    func send(event type: String, data: [UInt8]) {
        let event = ServerSentEvent(id: nil, type: type, data: data)
        let writeNow = state.withLock { state -> Bool in
            guard !state.ended else { return false }
            state.extras.removeAll { $0.type == type }
            state.extras.append(event)
            guard state.started && !state.busy else { return false }
            state.busy = true
            return true
        }
        if writeNow { writeExtras() }
    }

    /// Runs `handler` once when the stream ends (at once if it has).
    func onEnd(_ handler: @escaping @Sendable () -> Void) {
        let runNow = state.withLock { state -> Bool in
            if state.ended { return true }
            state.endHandlers.append(handler)
            return false
        }
        if runNow { handler() }
    }

    // MARK: - ParkedPoll

    var memberUser: UserID? { feed.membership?.user }

    func recheckMembership() {
        guard let membership = feed.membership else { return }
        do {
            if try environment.store.role(of: membership.user, in: membership.conversation) == nil { end() }
        } catch {
            // A store that cannot read ends the stream through its own reads.
        }
    }

    func revokeIfReading(_ conversation: ConversationID, as user: UserID) {
        guard let membership = feed.membership, membership.user == user, membership.conversation == conversation else {
            return
        }
        end()
    }

    /// Client gone, server draining, access lost: the stream ends now (a
    /// client reconnects with `Last-Event-ID`, and loses nothing).
    func cancel() { end() }

    // MARK: - The chain

    // One step owns the chain at a time: it set `busy` (or `parked`) under
    // the lock, and only it starts the next step. So there is never more
    // than one read, one write or one wait in flight, and a piece goes out
    // whole before the next is read.

    /// Reads after the cursor and writes what it found, or parks. Runs on
    /// the read pool; the caller claimed `busy`.
    private func pump() {
        let position: Int64? = state.withLock { state in
            state.wakePending = false
            state.more = false
            return state.ended ? nil : state.position
        }
        guard let position else { return }
        guard ContinuousClock.now < deadline else {
            end()
            return
        }
        environment.longPolls.countReread()
        let snapshot: Feed.Snapshot
        do {
            snapshot = try feed.read(after: position)
        } catch {
            // Access is decided in the read's own snapshot: a removed
            // member reads nothing committed after the removal. Any other
            // failure ends the stream too; the client resumes where it was.
            end()
            return
        }
        deliver(snapshot)
    }

    /// Writes a snapshot's events (and any extras), or parks when there
    /// are none. The caller claimed `busy`.
    private func deliver(_ snapshot: Feed.Snapshot) {
        let events = feed.streamEvents(snapshot)
        var bytes: [UInt8] = []
        var position = feed.position(of: snapshot)
        var more = feed.hasMore(snapshot)
        let cap = environment.limits.maximumResponseBytes
        for (index, event) in events.enumerated() {
            event.append(to: &bytes)
            if let id = event.id { position = id }
            if bytes.count >= cap && index < events.count - 1 {
                // The rest is read again once this piece is out.
                more = true
                break
            }
        }
        let (extras, park) = state.withLock { state -> ([ServerSentEvent], Bool) in
            state.position = position
            state.more = more
            let extras = state.extras
            state.extras = []
            guard bytes.isEmpty && extras.isEmpty else { return (extras, false) }
            state.busy = false
            state.parked = !state.ended
            return ([], state.parked)
        }
        for extra in extras { extra.append(to: &bytes) }
        if park { self.park() }
        guard !bytes.isEmpty else { return }
        write(bytes)
    }

    /// Writes the extra events waiting. The caller claimed `busy`.
    private func writeExtras() {
        let extras = state.withLock { state -> [ServerSentEvent] in
            let extras = state.extras
            state.extras = []
            if extras.isEmpty { state.busy = false }
            return extras
        }
        guard !extras.isEmpty else { return }
        var bytes: [UInt8] = []
        for extra in extras { extra.append(to: &bytes) }
        write(bytes)
    }

    private func write(_ bytes: [UInt8]) {
        body.write(bytes) { [self] written in environment.readPool.submit { self.written(written) } }
    }

    /// A piece reached the socket (or the connection closed first): read
    /// on, write the extras that waited, or park.
    private func written(_ written: Bool) {
        guard written else {
            end()
            return
        }
        let next = state.withLock { state -> StreamStep in
            state.busy = false
            if state.ended { return .nothing }
            if (state.more || state.wakePending) && !state.parked {
                state.busy = true
                return .read
            }
            if !state.extras.isEmpty {
                state.busy = true
                return .extras
            }
            if state.parked { return .nothing }
            state.parked = true
            return .park
        }
        switch next {
        case .read: pump()
        case .extras: writeExtras()
        case .park: park()
        case .heartbeat, .end, .nothing: break
        }
    }

    /// Waits in the store after the cursor, until a heartbeat is due at
    /// most. The caller set `parked`.
    private func park() {
        let remaining = deadline - .now
        guard remaining > .zero else {
            end()
            return
        }
        let (position, park) = state.withLock { state in
            state.parks += 1
            return (state.position, state.parks)
        }
        let timeout = min(remaining, environment.feeds.heartbeatInterval)
        let token = feed.wait(after: position, timeout: timeout) { outcome in
            // Off the store's queue: reads and encoding are ours to pay for.
            self.environment.readPool.submit { self.woke(outcome) }
        }
        let cancelNow = state.withLock { state in
            if state.parked && state.parks == park { state.token = token }
            return state.ended
        }
        if cancelNow { environment.store.cancelWait(token) }
    }

    private func woke(_ outcome: WaitOutcome) {
        let next = state.withLock { state -> StreamStep in
            state.parked = false
            state.token = nil
            if state.ended { return .nothing }
            switch outcome {
            case .changed:
                if state.busy {
                    state.wakePending = true
                    return .nothing
                }
                state.busy = true
                return .read
            case .timedOut:
                if state.busy {
                    // Something is on its way out: that is a sign of life.
                    state.parked = true
                    return .park
                }
                state.busy = true
                return .heartbeat
            case .cancelled, .closing:
                return .end
            }
        }
        switch next {
        case .read:
            pump()
        case .heartbeat:
            guard ContinuousClock.now < deadline else {
                end()
                return
            }
            write(ServerSentEvent.heartbeat)
        case .park:
            park()
        case .end:
            end()
        case .extras, .nothing:
            break
        }
    }

    /// Ends once: leaves the registry, stops the wait, finishes the body
    /// (the connection closes once it is written), runs `onEnd` handlers.
    private func end() {
        let (token, wasEnded) = state.withLock { state -> (WaitToken?, Bool) in
            let wasEnded = state.ended
            state.ended = true
            return (state.token, wasEnded)
        }
        guard !wasEnded else { return }
        if let token { environment.store.cancelWait(token) }
        environment.longPolls.unregister(self)
        body.finish()
        runEndHandlers()
    }

    private func runEndHandlers() {
        let handlers = state.withLock { state in
            let handlers = state.endHandlers
            state.endHandlers = []
            return handlers
        }
        for handler in handlers { handler() }
    }

    /// `first` on a draining server: its events, then the end.
    private func write(_ snapshot: Feed.Snapshot) {
        var bytes: [UInt8] = []
        for event in feed.streamEvents(snapshot) { event.append(to: &bytes) }
        if !bytes.isEmpty { body.write(bytes) }
    }
}

/// What an `EventStream` does next, decided under its lock.
private enum StreamStep {
    case read, extras, park, heartbeat, end, nothing
}
