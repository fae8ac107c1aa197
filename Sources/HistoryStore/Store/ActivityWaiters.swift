import Dispatch
import Synchronization

/// Parked long-polls of the backend feed (`GET /v1/events`): "tell me when
/// any change after activity A commits, anywhere on the server".
///
/// Every commit that takes `activity` values is published to
/// `InboxWaiters` with its last value (by this instance's writer, or by the
/// PostgreSQL listener for another instance's commit); `InboxWaiters`
/// hands each publication on here, so this feed is woken by exactly the
/// commits, local or not, that wake the user feeds, and costs them nothing
/// while no backend is parked. As in `VersionWaiters`, a wait registers
/// before it looks at the current activity, so a commit between the two
/// cannot be missed. Its tokens carry `tokenFlag` (and not
/// `InboxWaiters.tokenFlag`), so the store tells them apart.
package final class ActivityWaiters: Sendable {
    package static let tokenFlag: UInt64 = 1 << 62

    private struct Waiter {
        let after: Int64
        let handler: @Sendable (WaitOutcome) -> Void
        let timer: TimerBox
    }

    private struct State {
        var nextToken: UInt64 = 1
        var waiters: [UInt64: Waiter] = [:]
        /// The highest activity published since the first wait parked.
        var latest: Int64?
        var isClosed = false
    }

    private let state = Mutex(State())
    private let delivery = DispatchQueue(label: "history-store.activity-waiters", attributes: .concurrent)

    package init() {}

    package static func owns(_ token: WaitToken) -> Bool {
        token.rawValue & tokenFlag != 0 && token.rawValue & InboxWaiters.tokenFlag == 0
    }

    /// Parks a wait; `currentActivity` reads the committed activity (nil
    /// when it cannot: the wait then ends by a commit, its timeout or close).
    package func wait(after activity: Int64, timeout: Duration, currentActivity: () -> Int64?,
                      handler: @escaping @Sendable (WaitOutcome) -> Void) -> WaitToken {
        let timer = TimerBox(queue: delivery)
        let registered: (token: UInt64, known: Int64?)? = state.withLock { state in
            guard !state.isClosed else { return nil }
            let token = Self.tokenFlag | state.nextToken
            state.nextToken += 1
            state.waiters[token] = Waiter(after: activity, handler: handler, timer: timer)
            return (token, state.latest)
        }
        guard let registered else {
            timer.cancel()
            delivery.async { handler(.closing) }
            return WaitToken(rawValue: 0)
        }
        let token = registered.token
        timer.arm(after: timeout) { [weak self] in self?.finish(token, with: .timedOut) }
        if let known = registered.known, known > activity {
            finish(token, with: .changed)
            return WaitToken(rawValue: token)
        }
        if let current = currentActivity(), current > activity {
            finish(token, with: .changed)
        }
        return WaitToken(rawValue: token)
    }

    /// A commit whose last `activity` value is `activity` is visible to readers.
    package func publish(activity: Int64) {
        let woken: [Waiter] = state.withLock { state in
            guard !state.waiters.isEmpty else { return [] }
            state.latest = max(state.latest ?? activity, activity)
            var woken: [Waiter] = []
            for (token, waiter) in state.waiters where waiter.after < activity {
                woken.append(waiter)
                state.waiters[token] = nil
            }
            if state.waiters.isEmpty { state.latest = nil }
            return woken
        }
        for waiter in woken { deliver(.changed, to: waiter) }
    }

    /// Wakes every parked wait (commits may have gone by unheard).
    package func wakeAll() {
        let woken: [Waiter] = state.withLock { state in
            let all = Array(state.waiters.values)
            state.waiters.removeAll()
            state.latest = nil
            return all
        }
        for waiter in woken { deliver(.changed, to: waiter) }
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
        let all: [Waiter] = state.withLock { state in
            state.isClosed = true
            let all = Array(state.waiters.values)
            state.waiters.removeAll()
            state.latest = nil
            return all
        }
        for waiter in all { deliver(.closing, to: waiter) }
        delivery.sync(flags: .barrier) {}
    }

    private func finish(_ token: UInt64, with outcome: WaitOutcome) {
        let waiter: Waiter? = state.withLock { state in
            guard let waiter = state.waiters.removeValue(forKey: token) else { return nil }
            if state.waiters.isEmpty { state.latest = nil }
            return waiter
        }
        if let waiter { deliver(outcome, to: waiter) }
    }

    private func deliver(_ outcome: WaitOutcome, to waiter: Waiter) {
        waiter.timer.cancel()
        let handler = waiter.handler
        delivery.async { handler(outcome) }
    }
}
