import Dispatch
import HTTPCore
import HistoryStore
import Synchronization

/// One user-feed request (`GET /v1/users/{uid}/events?wait=S`) parked
/// until one of the user's conversations, the user's read markers or the
/// user's memberships change, its wait runs out, the client goes away, or
/// the server drains.
///
/// The same life as a conversation's `LongPoll`, over the store's inbox
/// wait: no thread waits (a continuation in the store's waiter table), one
/// wait outstanding at a time, each wait's handler starting the next step,
/// so the answer is sent exactly once:
/// 1. park after the activity it last read;
/// 2. woken with `.changed`: re-read; an event (or `has_more`): answer;
///    nothing for this user and time left: park again;
/// 3. `.timedOut`, `.cancelled` or `.closing`: answer what a final read
///    finds, normally the empty list with the current activity (the last
///    activity read if the store can no longer read: still a valid `since`).
///
/// Unlike a conversation's poll it is never revoked: a membership that
/// ends is one of the changes it reports (`removed`), and an inbox is
/// always its own user's.
final class InboxLongPoll: ParkedPoll {
    private struct State: Sendable {
        var token: WaitToken?
        var cancelled = false
        /// Nothing of this user's inbox changed up to it: the next read starts there.
        var lastActivity: Int64
    }

    private let request: APIRequest
    let client: ClientKey?
    private let user: UserID
    private let query: InboxChangeQuery
    private let deadline: ContinuousClock.Instant
    private let environment: RouteEnvironment
    private let state: Mutex<State>

    init(request: APIRequest, caller: Caller, user: UserID, query: InboxChangeQuery,
         deadline: ContinuousClock.Instant, environment: RouteEnvironment) {
        self.request = request
        client = ClientKey(caller: caller, context: request.context)
        self.user = user
        self.query = query
        self.deadline = deadline
        self.environment = environment
        state = Mutex(State(lastActivity: query.since))
    }

    /// Parks after `activity`, the server's activity at the first read.
    func start(afterActivity activity: Int64) {
        state.withLock { $0.lastActivity = activity }
        switch environment.longPolls.register(self) {
        case .parked:
            break
        case .draining:
            finish()
            return
        case .overClientLimit(let limit):
            environment.metrics.recordDenied(status: 429, code: ErrorCode.tooManyRequests.rawValue)
            request.fail(APIError(.tooManyRequests,
                                  "this client already has \(limit) long-polls waiting; answer one before parking another"))
            return
        }
        request.context.onClose { [self] in cancel() }
        park()
    }

    func cancel() {
        let token: WaitToken? = state.withLock { state in
            state.cancelled = true
            return state.token
        }
        if let token { environment.store.cancelWait(token) }
    }

    func revokeIfReading(_ conversation: ConversationID, as user: UserID) {}

    private func park() {
        let (remaining, activity, cancelled) = state.withLock { state in
            (deadline - .now, state.lastActivity, state.cancelled)
        }
        guard remaining > .zero, !cancelled else {
            finish()
            return
        }
        let token = environment.store.waitForInboxChange(of: user, after: activity, timeout: remaining) { outcome in
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
        guard outcome == .changed else {
            finish()
            return
        }
        environment.longPolls.countReread()
        let feed: InboxFeed
        do {
            feed = try environment.store.inboxChanges(of: user, feedQuery(since: state.withLock { $0.lastActivity }))
        } catch {
            finish()
            return
        }
        if !feed.events.isEmpty || feed.hasMore {
            answer(feed)
            return
        }
        state.withLock { $0.lastActivity = feed.activity }
        park()
    }

    /// The final read and answer.
    private func finish() {
        let since = state.withLock { $0.lastActivity }
        let feed = (try? environment.store.inboxChanges(of: user, feedQuery(since: since)))
            ?? InboxFeed(events: [], hasMore: false, activity: since)
        answer(feed)
    }

    private func feedQuery(since: Int64) -> InboxChangeQuery {
        var query = query
        query.since = since
        return query
    }

    private func answer(_ feed: InboxFeed) {
        environment.longPolls.unregister(self)
        request.respond(.ok, json: JSONWriter.inboxFeed(feed, budget: environment.limits.maximumResponseBytes))
    }
}
