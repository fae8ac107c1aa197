import Dispatch
import HTTPCore
import HistoryAccess
import HistoryStore
import Synchronization

/// One feed request parked until something it reads changes, its wait
/// runs out, the client goes away, or the server drains: a conversation's
/// `events` or a user's inbox `events` (`PolledFeed`).
///
/// No thread waits: the poll hangs on the store's wait (a continuation in
/// its waiter table) and is resumed by the store's commit signal, so
/// 10,000 parked polls cost 10,000 small objects, not 10,000 threads.
///
/// The life of a poll is a chain of waits, one outstanding at a time:
/// 1. park after the position (version, activity) it last read;
/// 2. woken with `.changed`: re-read; news for it (or `has_more`): answer;
///    nothing for it and time left: park again. (The store filters wakes
///    that cannot concern the poll: commits outside a conversation poll's
///    id range, commits to conversations an inbox's user is not in.)
/// 3. `.timedOut`, `.cancelled` (client gone, server draining) or `.closing`:
///    answer what a final read finds, normally the empty list with the
///    current position; if the store can no longer read, the empty list with
///    the position last read, which is always a valid next `since`.
/// 4. revoked (its user was removed from the conversation it reads as a
///    member): answered 404 `conversation_not_found` at once, as any later
///    request of that user's would be.
///
/// Because each wait's handler runs exactly once and starts the next step,
/// the answer is sent exactly once. `cancel()` may come from any thread at
/// any time; the lock only guards which wait is current.
final class LongPoll<Feed: PolledFeed>: ParkedPoll {
    private struct State: Sendable {
        var token: WaitToken?
        var cancelled = false
        /// The caller lost access to the conversation.
        var revoked = false
        /// The position of the last read: nothing the poll cares about
        /// changed up to it, so the next read starts there.
        var lastPosition: Int64
    }

    /// The poll's one answer.
    private let promise: AnswerPromise
    private let feed: Feed
    /// Whose parked-poll allowance this poll uses; nil for an admin token.
    let client: ClientKey?
    private let deadline: ContinuousClock.Instant
    private let environment: RouteEnvironment
    private let state: Mutex<State>

    init(promise: AnswerPromise, caller: Caller, feed: Feed, deadline: ContinuousClock.Instant,
         environment: RouteEnvironment) {
        self.promise = promise
        self.feed = feed
        client = ClientKey(caller: caller, context: promise.request.context)
        self.deadline = deadline
        self.environment = environment
        state = Mutex(State(lastPosition: 0))
    }

    /// Parks after `position`, the feed's position at the first read.
    func start(after position: Int64) {
        state.withLock { $0.lastPosition = position }
        switch environment.longPolls.register(self) {
        case .parked:
            break
        case .draining:
            // Answer at once instead of parking.
            finish()
            return
        case .overClientLimit(let limit):
            environment.metrics.recordDenied(status: 429, code: ErrorCode.tooManyRequests.rawValue)
            promise.fail(APIError(.tooManyRequests,
                                  "this client already has \(limit) long-polls waiting; answer one before parking another"))
            return
        }
        promise.request.context.onClose { [self] in cancel() }
        // A removal that committed after the access check but before the
        // poll was registered found nothing to revoke: look again.
        recheckMembership()
        park()
    }

    var memberUser: UserID? { feed.membership?.user }

    func recheckMembership() {
        guard let membership = feed.membership else { return }
        do {
            if try environment.store.role(of: membership.user, in: membership.conversation) == nil { revoke() }
        } catch {
            // A store that cannot read answers the poll through its own reads.
        }
    }

    /// Answers 404 now when this poll reads `conversation` as `user`.
    func revokeIfReading(_ conversation: ConversationID, as user: UserID) {
        guard let membership = feed.membership, membership.user == user, membership.conversation == conversation else {
            return
        }
        revoke()
    }

    /// The caller was removed from the conversation: answer 404 now.
    private func revoke() {
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
        let (remaining, position, cancelled) = state.withLock { state in
            (deadline - .now, state.lastPosition, state.cancelled)
        }
        guard remaining > .zero, !cancelled else {
            finish()
            return
        }
        let token = feed.wait(after: position, timeout: remaining) { outcome in
            // Off the store's queue: the re-read and the encoding are ours
            // to pay for, on the read pool, never on the store's delivery queue.
            self.environment.readPool.submit { self.woke(outcome) }
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
        environment.longPolls.countReread()
        let snapshot: Feed.Snapshot
        do {
            snapshot = try feed.read(after: state.withLock { $0.lastPosition })
        } catch {
            // The read decided access in its own snapshot: a caller removed
            // before it gets the 404, never what was committed after.
            if Self.lostAccess(error) { state.withLock { $0.revoked = true } }
            finish()
            return
        }
        if feed.hasNews(snapshot) {
            answer(snapshot)
            return
        }
        state.withLock { $0.lastPosition = feed.position(of: snapshot) }
        park()
    }

    /// The final read and answer.
    private func finish() {
        let (position, revoked) = state.withLock { ($0.lastPosition, $0.revoked) }
        if revoked, let membership = feed.membership {
            environment.longPolls.unregister(self)
            promise.fail(StoreError.conversationNotFound(membership.conversation))
            return
        }
        do {
            answer(try feed.read(after: position))
        } catch where Self.lostAccess(error) && feed.membership != nil {
            environment.longPolls.unregister(self)
            promise.fail(error)
        } catch {
            answer(feed.nothing(after: position))
        }
    }

    /// The store refused the caller in the read's snapshot (a removal).
    private static func lostAccess(_ error: StoreError) -> Bool {
        switch error {
        case .conversationNotFound, .refused: true
        default: false
        }
    }

    private func answer(_ snapshot: Feed.Snapshot) {
        environment.longPolls.unregister(self)
        promise.succeed(.ok, json: feed.json(snapshot, budget: environment.limits.maximumResponseBytes))
    }
}
