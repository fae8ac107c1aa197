import Dispatch
import Synchronization

/// Parked long-polls of user feeds: "tell me when something in U's inbox
/// changes after activity A", without a thread per wait.
///
/// A wait is registered under its user (woken when the user's marker or
/// memberships change) and under each of the user's conversations (woken
/// by any change there): so a post wakes the parked members of its
/// conversation and nobody else, and a commit costs one dictionary lookup
/// per conversation it touched. A user with more than `membershipCap`
/// conversations is woken by every commit instead (a spurious wake costs
/// that user one feed read, nothing more).
///
/// A woken poll that answers parks again at once (the client's next
/// request), so parking must cost no store read in the steady state
/// (docs/performance.md, "The inbox feed with 10,000 parked users"):
/// - the user's conversation seqs are read once and kept
///   (`MembershipCache`) until a commit changes the user (`publish`'s
///   `users`: its memberships, marker or conversations it created), so a
///   re-park reads nothing;
/// - the first look ("anything after A already?") is skipped when A is at
///   or past the last activity published: every commit after A is then
///   still to be published, and the wait, registered before it, is woken
///   by it. (Only a store that publishes every commit, with its activity,
///   after the commit is visible says so, by `publishedActivity`.)
///
/// As in `VersionWaiters`, a wait registers before it looks, so a commit
/// between the look and the registration cannot be missed. Its tokens have
/// the top bit set, so the store tells them apart from conversation waits'.
package final class InboxWaiters: Sendable {
    package static let tokenFlag: UInt64 = 1 << 63
    package static let membershipCap = 5000

    private struct Waiter {
        let user: String
        let after: Int64
        var conversations: [Int64] = []
        var watchesEverything = false
        /// Its conversations came from `MembershipCache`, not from a read
        /// made for this wait: they may predate a membership change the
        /// client already saw, whose publication is still to come.
        var usedCachedMemberships = false
        let handler: @Sendable (WaitOutcome) -> Void
        let timer: TimerBox
    }

    private struct State {
        var nextToken: UInt64 = 1
        var waiters: [UInt64: Waiter] = [:]
        var byUser: [String: Set<UInt64>] = [:]
        var byConversation: [Int64: Set<UInt64>] = [:]
        var watchingEverything: Set<UInt64> = []
        var memberships = MembershipCache()
        /// The highest activity published; nil when the store does not
        /// promise that every commit is published (then every wait looks).
        var publishedActivity: Int64?
        var isClosed = false
    }

    private let state: Mutex<State>
    /// The backend feed's waits: every publication here is one of theirs too.
    package let everyChange = ActivityWaiters()
    private let userObservers = Mutex<[@Sendable (Set<UserID>?) -> Void]>([])
    private let delivery = DispatchQueue(label: "history-store.inbox-waiters", attributes: .concurrent)

    /// `publishedActivity`: the activity every commit so far is at or
    /// below, given by a store that then publishes each commit with its
    /// activity once readers can see it; nil (the default): the store
    /// promises nothing, and every wait looks at the feed once it is parked.
    package init(publishedActivity: Int64? = nil) {
        state = Mutex(State(publishedActivity: publishedActivity))
    }

    /// `handler` is told the users of every later publication that names
    /// some, and nil at `wakeAll` (see `HistoryStore.observeUserChanges`).
    package func observeUserChanges(_ handler: @escaping @Sendable (Set<UserID>?) -> Void) {
        userObservers.withLock { $0.append(handler) }
    }

    private func tellObservers(_ users: Set<UserID>?) {
        let observers = userObservers.withLock { $0 }
        for observer in observers { observer(users) }
    }

    package static func owns(_ token: WaitToken) -> Bool {
        token.rawValue & tokenFlag != 0
    }

    /// Parks a wait. `memberships` reads up to `membershipCap + 1` of the
    /// user's conversation seqs (nil when it cannot: the wait then watches
    /// every commit), called only when they are not known already;
    /// `hasChanges` tells whether the feed already has something after
    /// `activity` (nil when it cannot be read: the wait then ends by a
    /// commit, its timeout or close), called only when a commit after
    /// `activity` may have been published already.
    package func wait(user: UserID, after activity: Int64, timeout: Duration,
              memberships: () -> [Int64]?, hasChanges: () -> Bool?,
              handler: @escaping @Sendable (WaitOutcome) -> Void) -> WaitToken {
        let key = user.rawValue
        let timer = TimerBox(queue: delivery)
        let parked: (token: UInt64, known: MembershipCache.Seqs?, mustLook: Bool)? = state.withLock { state in
            guard !state.isClosed else { return nil }
            let token = Self.tokenFlag | state.nextToken
            state.nextToken += 1
            state.waiters[token] = Waiter(user: key, after: activity, handler: handler, timer: timer)
            state.byUser[key, default: []].insert(token)
            let known = state.memberships.seqs(of: key)
            if known == nil { state.memberships.startLoading(key) }
            let mustLook = state.publishedActivity.map { activity < $0 } ?? true
            return (token, known, mustLook)
        }
        guard let parked else {
            timer.cancel()
            delivery.async { handler(.closing) }
            return WaitToken(rawValue: 0)
        }
        let token = parked.token
        timer.arm(after: timeout) { [weak self] in self?.finish(token, with: .timedOut) }
        var seqs = parked.known
        var loaded: MembershipCache.Seqs?
        if seqs == nil {
            loaded = memberships().map { $0.count <= Self.membershipCap ? .conversations($0) : .tooMany }
            seqs = loaded
        }
        state.withLock { state in
            if parked.known == nil { state.memberships.finishLoading(key, with: loaded) }
            guard var waiter = state.waiters[token] else { return }
            if case .conversations(let list) = seqs {
                for seq in list { state.byConversation[seq, default: []].insert(token) }
                waiter.conversations = list
            } else {
                state.watchingEverything.insert(token)
                waiter.watchesEverything = true
            }
            waiter.usedCachedMemberships = parked.known != nil
            state.waiters[token] = waiter
        }
        if parked.mustLook, hasChanges() == true { finish(token, with: .changed) }
        return WaitToken(rawValue: token)
    }

    /// Called after a commit: `activity` is its last value, `conversations`
    /// the seqs it changed, `users` those whose marker or memberships it
    /// changed.
    ///
    /// A wait of one of `users` that is already past `activity` is woken
    /// too when it took its conversations from the cache: its client saw
    /// this commit before it was published here (another instance's commit
    /// reaches this one through LISTEN, a moment later), so the cached list
    /// may lack a conversation just joined, whose posts would then not wake
    /// it. The wake costs one feed read, which finds nothing and parks again
    /// with the memberships read afresh.
    package func publish(activity: Int64, conversations: Set<Int64>, users: Set<String>) {
        everyChange.publish(activity: activity)
        let woken: [Waiter] = state.withLock { state in
            if let published = state.publishedActivity, activity > published { state.publishedActivity = activity }
            for user in users { state.memberships.forget(user) }
            guard !state.waiters.isEmpty else { return [] }
            var tokens = state.watchingEverything
            for seq in conversations { if let parked = state.byConversation[seq] { tokens.formUnion(parked) } }
            var usersTokens = Set<UInt64>()
            for user in users { if let parked = state.byUser[user] { usersTokens.formUnion(parked) } }
            tokens.formUnion(usersTokens)
            var woken: [Waiter] = []
            for token in tokens {
                guard let waiter = state.waiters[token],
                      waiter.after < activity || (waiter.usedCachedMemberships && usersTokens.contains(token))
                else { continue }
                woken.append(waiter)
                Self.remove(token, from: &state)
            }
            return woken
        }
        for waiter in woken { deliver(.changed, to: waiter) }
        if !users.isEmpty { tellObservers(Set(users.compactMap { UserID($0) })) }
    }

    /// Wakes every parked wait with `.changed` (see
    /// `VersionWaiters.wakeAll`: commits may have gone by unheard).
    package func wakeAll() {
        everyChange.wakeAll()
        let woken: [Waiter] = state.withLock { state in
            let all = Array(state.waiters.values)
            state.waiters.removeAll()
            state.byUser.removeAll()
            state.byConversation.removeAll()
            state.watchingEverything.removeAll()
            state.memberships.forgetAll()
            return all
        }
        for waiter in woken { deliver(.changed, to: waiter) }
        tellObservers(nil)
    }

    package func cancel(_ token: WaitToken) {
        finish(token.rawValue, with: .cancelled)
    }

    package var parkedCount: Int {
        state.withLock { $0.waiters.count }
    }

    /// Answers every parked wait `.closing` (and every later one at once),
    /// and returns once those handlers have run.
    package func close() {
        everyChange.close()
        let all: [Waiter] = state.withLock { state in
            state.isClosed = true
            let all = Array(state.waiters.values)
            state.waiters.removeAll()
            state.byUser.removeAll()
            state.byConversation.removeAll()
            state.watchingEverything.removeAll()
            state.memberships = MembershipCache()
            return all
        }
        for waiter in all { deliver(.closing, to: waiter) }
        delivery.sync(flags: .barrier) {}
    }

    // MARK: - Private

    private func finish(_ token: UInt64, with outcome: WaitOutcome) {
        let waiter: Waiter? = state.withLock { state in
            guard let waiter = state.waiters[token] else { return nil }
            Self.remove(token, from: &state)
            return waiter
        }
        if let waiter { deliver(outcome, to: waiter) }
    }

    private func deliver(_ outcome: WaitOutcome, to waiter: Waiter) {
        waiter.timer.cancel()
        let handler = waiter.handler
        delivery.async { handler(outcome) }
    }

    private static func remove(_ token: UInt64, from state: inout State) {
        guard let waiter = state.waiters.removeValue(forKey: token) else { return }
        removeToken(token, key: waiter.user, from: &state.byUser)
        for seq in waiter.conversations { removeToken(token, key: seq, from: &state.byConversation) }
        if waiter.watchesEverything { state.watchingEverything.remove(token) }
    }

    private static func removeToken<Key: Hashable>(_ token: UInt64, key: Key, from map: inout [Key: Set<UInt64>]) {
        map[key]?.remove(token)
        if map[key]?.isEmpty == true { map[key] = nil }
    }
}
