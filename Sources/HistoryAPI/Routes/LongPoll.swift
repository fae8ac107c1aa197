import Dispatch
import HTTPCore
import HistoryStore
import Synchronization

/// One `events` request parked until its conversation changes, its wait
/// runs out, the client goes away, or the server drains.
///
/// No thread waits: the poll hangs on `HistoryStore.waitForChange` (a
/// continuation in the store's waiter table) and is resumed by the store's
/// commit signal, so 10,000 parked polls cost 10,000 small objects, not
/// 10,000 threads.
///
/// The life of a poll is a chain of waits, one outstanding at a time:
/// 1. park after the version it last read;
/// 2. woken with `.changed`: re-read; an event for it (or `has_more`): answer;
///    nothing for it (another id range changed) and time left: park again;
/// 3. `.timedOut`, `.cancelled` (client gone, server draining) or `.closing`:
///    answer what a final read finds, normally the empty list with the
///    current version; if the store can no longer read, the empty list with
///    the version last read, which is always a valid next `since`.
/// 4. revoked (its user was removed from the conversation): answered 404
///    `conversation_not_found` at once, as any later request of that user's
///    would be.
///
/// Because each wait's handler runs exactly once and starts the next step,
/// the answer is sent exactly once. `cancel()` may come from any thread at
/// any time; the lock only guards which wait is current.
final class LongPoll: Sendable {
    private struct State: Sendable {
        var token: WaitToken?
        var cancelled = false
        /// The caller lost access to the conversation.
        var revoked = false
        /// The version of the last read: nothing the poll cares about
        /// changed up to it, so the next read starts there.
        var lastVersion: Int64
    }

    private let request: APIRequest
    /// Who asked, so a removal from the conversation can find its polls.
    let caller: Caller
    let conversation: ConversationID
    private let query: ChangeQuery
    private let deadline: ContinuousClock.Instant
    private let environment: RouteEnvironment
    private let state: Mutex<State>

    init(request: APIRequest, caller: Caller, conversation: ConversationID, query: ChangeQuery,
         deadline: ContinuousClock.Instant, environment: RouteEnvironment) {
        self.request = request
        self.caller = caller
        self.conversation = conversation
        self.query = query
        self.deadline = deadline
        self.environment = environment
        state = Mutex(State(lastVersion: query.since))
    }

    /// Parks after `version`, the conversation's version at the first read.
    func start(afterVersion version: Int64) {
        state.withLock { $0.lastVersion = version }
        guard environment.longPolls.register(self) else {
            // Draining: answer at once instead of parking.
            finish()
            return
        }
        request.context.onClose { [self] in cancel() }
        // A removal that committed after the access check but before the
        // poll was registered found nothing to revoke: look again.
        if case .user(let user) = caller {
            do {
                if try environment.store.role(of: user, in: conversation) == nil { revoke() }
            } catch {
                // A store that cannot read answers the poll through its own reads.
            }
        }
        park()
    }

    /// The caller was removed from the conversation: answer 404 now.
    func revoke() {
        state.withLock { $0.revoked = true }
        cancel()
    }

    /// Ends the current wait early; the poll then answers (harmless after it has).
    func cancel() {
        let token: WaitToken? = state.withLock { state in
            state.cancelled = true
            return state.token
        }
        // Cancelling a wait whose handler already ran does nothing.
        if let token { environment.store.cancelWait(token) }
    }

    private func park() {
        let (remaining, version, cancelled) = state.withLock { state in
            (deadline - .now, state.lastVersion, state.cancelled)
        }
        guard remaining > .zero, !cancelled else {
            finish()
            return
        }
        let token = environment.store.waitForChange(in: conversation, after: version, timeout: remaining) { outcome in
            // Off the store's queue: the re-read and the encoding are ours to pay for.
            DispatchQueue.global().async { self.woke(outcome) }
        }
        let cancelNow = state.withLock { state in
            state.token = token
            return state.cancelled
        }
        if cancelNow { environment.store.cancelWait(token) }
    }

    private func woke(_ outcome: WaitOutcome) {
        guard outcome == .changed, !state.withLock({ $0.revoked }) else {
            finish()
            return
        }
        let since = state.withLock { $0.lastVersion }
        var query = query
        query.since = since
        let feed: ChangeFeed
        do {
            feed = try environment.store.changes(in: conversation, query)
        } catch {
            finish()
            return
        }
        if !feed.events.isEmpty || feed.hasMore {
            answer(feed)
            return
        }
        state.withLock { $0.lastVersion = feed.version }
        park()
    }

    /// The final read and answer.
    private func finish() {
        let (since, revoked) = state.withLock { ($0.lastVersion, $0.revoked) }
        if revoked {
            environment.longPolls.unregister(self)
            request.fail(APIError(StoreError.conversationNotFound(conversation)))
            return
        }
        var query = query
        query.since = since
        let feed = (try? environment.store.changes(in: conversation, query))
            ?? ChangeFeed(events: [], hasMore: false, version: since)
        answer(feed)
    }

    private func answer(_ feed: ChangeFeed) {
        environment.longPolls.unregister(self)
        request.respond(.ok, json: JSONWriter.changeFeed(feed))
    }
}

/// The polls parked now, so a draining server can answer them all.
final class LongPollRegistry: Sendable {
    private struct State: Sendable {
        var polls: [ObjectIdentifier: LongPoll] = [:]
        var draining = false
    }

    private let state = Mutex(State())

    /// False when draining: the caller answers at once instead of parking.
    func register(_ poll: LongPoll) -> Bool {
        state.withLock { state in
            guard !state.draining else { return false }
            state.polls[ObjectIdentifier(poll)] = poll
            return true
        }
    }

    func unregister(_ poll: LongPoll) {
        _ = state.withLock { $0.polls.removeValue(forKey: ObjectIdentifier(poll)) }
    }

    var isDraining: Bool { state.withLock { $0.draining } }

    /// Answers 404 every poll `user` has parked on `conversation`: a
    /// removed member loses access at once, parked requests included.
    func revoke(user: UserID, in conversation: ConversationID) {
        let polls = state.withLock { state in
            state.polls.values.filter { $0.caller == .user(user) && $0.conversation == conversation }
        }
        for poll in polls { poll.revoke() }
    }

    var count: Int { state.withLock { $0.polls.count } }

    /// From now on no poll parks; every parked one is answered.
    func drain() {
        let polls = state.withLock { state in
            state.draining = true
            return Array(state.polls.values)
        }
        for poll in polls { poll.cancel() }
    }
}
