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
///    nothing for it and time left: park again. (A poll with an id range is
///    not woken by commits outside it: the store filters its wakes.)
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
final class LongPoll: ParkedPoll {
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
    /// Whose parked-poll allowance this poll uses; nil for an admin token.
    let client: ClientKey?
    let conversation: ConversationID
    private let query: ChangeQuery
    private let deadline: ContinuousClock.Instant
    private let environment: RouteEnvironment
    private let state: Mutex<State>

    init(request: APIRequest, caller: Caller, conversation: ConversationID, query: ChangeQuery,
         deadline: ContinuousClock.Instant, environment: RouteEnvironment) {
        self.request = request
        self.caller = caller
        client = ClientKey(caller: caller, context: request.context)
        self.conversation = conversation
        self.query = query
        self.deadline = deadline
        self.environment = environment
        state = Mutex(State(lastVersion: query.since))
    }

    /// Parks after `version`, the conversation's version at the first read.
    func start(afterVersion version: Int64) {
        state.withLock { $0.lastVersion = version }
        switch environment.longPolls.register(self) {
        case .parked:
            break
        case .draining:
            // Answer at once instead of parking.
            finish()
            return
        case .overClientLimit(let limit):
            environment.metrics.recordDenied(status: 429, code: ErrorCode.tooManyRequests.rawValue)
            request.fail(APIError(.tooManyRequests,
                                  "this client already has \(limit) long-polls waiting; answer one before parking another"))
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

    /// Answers 404 now when this is `user`'s poll on `conversation`.
    func revokeIfReading(_ conversation: ConversationID, as user: UserID) {
        if caller == .user(user) && self.conversation == conversation { revoke() }
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
        let token = environment.store.waitForChange(in: conversation, after: version, ids: idRange,
                                                    timeout: remaining) { outcome in
            // Off the store's queue: the re-read and the encoding are ours to pay for.
            DispatchQueue.global().async { self.woke(outcome) }
        }
        let cancelNow = state.withLock { state in
            state.token = token
            return state.cancelled
        }
        if cancelNow { environment.store.cancelWait(token) }
    }

    /// The poll's `min_id`/`max_id` as the store's wake filter: a commit
    /// that changed no message in it cannot add an event, so it does not
    /// wake the poll (no read, no re-park).
    private var idRange: ClosedRange<Int64>? {
        guard query.minID != nil || query.maxID != nil else { return nil }
        return (query.minID ?? 1)...(query.maxID ?? Int64.max)
    }

    private func woke(_ outcome: WaitOutcome) {
        guard outcome == .changed, !state.withLock({ $0.revoked }) else {
            finish()
            return
        }
        environment.longPolls.countReread()
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
        request.respond(.ok, json: JSONWriter.changeFeed(feed, budget: environment.limits.maximumResponseBytes))
    }
}
