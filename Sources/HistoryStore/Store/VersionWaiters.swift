import Dispatch
import Synchronization

/// Parked "tell me when conversation C's version exceeds V" requests: the
/// long-poll of the `events` endpoint, without a thread per wait.
///
/// A wait is a dictionary entry plus a dispatch timer for its timeout, so
/// ten thousand parked waits cost memory, not threads. The writer calls
/// `publish` with each conversation's new version after every commit; a wait
/// registers *before* it looks at the current version, so a commit between
/// the two cannot be missed: either `publish` sees the entry, or the look
/// sees the commit. Handlers run on a concurrent delivery queue, never on the
/// caller's thread nor the writer's, and each exactly once.
package final class VersionWaiters: Sendable {
    private struct Waiter {
        let conversation: String
        let after: Int64
        /// Only commits that changed a message in this range wake it.
        let ids: ClosedRange<Int64>?
        let handler: @Sendable (WaitOutcome) -> Void
        let timer: TimerBox
    }

    private struct State {
        var nextToken: UInt64 = 1
        var waiters: [UInt64: Waiter] = [:]
        /// Tokens of each conversation's parked waits.
        var byConversation: [String: Set<UInt64>] = [:]
        /// The latest committed version, kept only while a conversation has
        /// parked waits (so the map stays as small as the set of waits).
        var latest: [String: Int64] = [:]
        var isClosed = false
    }

    private let state = Mutex(State())
    private let delivery = DispatchQueue(label: "history-store.waiters", attributes: .concurrent)

    package init() {}

    /// Parks a wait. `currentVersion` reads the committed version when no
    /// commit was published since the conversation's first wait (nil when it
    /// cannot be read: the wait then ends by timeout, publish or close).
    package func wait(conversation: ConversationID, after version: Int64, ids: ClosedRange<Int64>? = nil, timeout: Duration,
              currentVersion: () -> Int64?,
              handler: @escaping @Sendable (WaitOutcome) -> Void) -> WaitToken {
        let key = conversation.rawValue
        let timer = TimerBox(queue: delivery)
        let registered: (token: UInt64, known: Int64?)? = state.withLock { state in
            guard !state.isClosed else { return nil }
            let token = state.nextToken
            state.nextToken += 1
            state.waiters[token] = Waiter(conversation: key, after: version, ids: ids, handler: handler, timer: timer)
            state.byConversation[key, default: []].insert(token)
            return (token, state.latest[key])
        }
        guard let registered else {
            timer.cancel()
            delivery.async { handler(.closing) }
            return WaitToken(rawValue: 0)
        }
        let token = registered.token
        // Armed only once registered: a zero timeout then finds its entry.
        timer.arm(after: timeout) { [weak self] in self?.finish(token, with: .timedOut) }
        if let known = registered.known {
            if known > version { finish(token, with: .changed) }
            return WaitToken(rawValue: token)
        }
        guard let current = currentVersion() else { return WaitToken(rawValue: token) }
        let satisfied = state.withLock { state -> Bool in
            guard state.waiters[token] != nil else { return false }
            // A publish may have raced ahead of the read: keep the larger.
            let latest = max(state.latest[key] ?? current, current)
            state.latest[key] = latest
            return latest > version
        }
        if satisfied { finish(token, with: .changed) }
        return WaitToken(rawValue: token)
    }

    /// Called by the writer after a commit, with the conversation's new
    /// version and the messages the commit changed there (nil: unknown,
    /// which wakes every wait). A wait whose id range none of them is in
    /// stays parked, with its `after` unchanged, so a later commit in its
    /// range still wakes it and its read covers everything since.
    package func publish(conversation: ConversationID, version: Int64, changed: ChangedMessageIDs? = nil) {
        let key = conversation.rawValue
        let woken: [Waiter] = state.withLock { state in
            guard let tokens = state.byConversation[key] else { return [] }
            state.latest[key] = max(state.latest[key] ?? version, version)
            var woken: [Waiter] = []
            for token in tokens {
                guard let waiter = state.waiters[token], waiter.after < version else { continue }
                if let ids = waiter.ids, let changed, !changed.intersects(ids) { continue }
                woken.append(waiter)
                Self.remove(token, from: &state)
            }
            return woken
        }
        for waiter in woken { deliver(.changed, to: waiter) }
    }

    /// Wakes every parked wait with `.changed` and forgets every version
    /// learnt from commits: for a store that may have missed some (a
    /// PostgreSQL instance whose listening connection was lost, so
    /// notices of other instances' commits went by unheard). Each woken
    /// caller reads again and parks again with what it read, which is
    /// current: a spurious wake costs one read, a missed one a whole
    /// timeout.
    package func wakeAll() {
        let woken: [Waiter] = state.withLock { state in
            let all = Array(state.waiters.values)
            state.waiters.removeAll()
            state.byConversation.removeAll()
            state.latest.removeAll()
            return all
        }
        for waiter in woken { deliver(.changed, to: waiter) }
    }

    /// Ends a wait with `.cancelled` unless it already ended.
    package func cancel(_ token: WaitToken) {
        finish(token.rawValue, with: .cancelled)
    }

    package var parkedCount: Int {
        state.withLock { $0.waiters.count }
    }

    /// Answers every parked wait `.closing` (and every later one at once),
    /// and returns once those handlers have run.
    package func close() {
        let all: [Waiter] = state.withLock { state in
            state.isClosed = true
            let all = Array(state.waiters.values)
            state.waiters.removeAll()
            state.byConversation.removeAll()
            state.latest.removeAll()
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
        state.byConversation[waiter.conversation]?.remove(token)
        if state.byConversation[waiter.conversation]?.isEmpty == true {
            state.byConversation[waiter.conversation] = nil
            state.latest[waiter.conversation] = nil
        }
    }
}
