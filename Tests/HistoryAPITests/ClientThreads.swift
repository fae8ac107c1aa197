import Dispatch
import Foundation
import HTTPCore
import HistoryTestSupport
import Synchronization

/// Runs `count` clients of `server` at once, each on a thread of its own
/// with a connection of its own (a pool of two cores' width would run the
/// writers first and the readers after them), and waits for all of them.
/// - Returns: whether all ended within `timeout`, and what they threw.
func runClientThreads(_ server: RunningServer, count: Int, timeout: DispatchTimeInterval = .seconds(120),
                      _ body: @escaping @Sendable (_ index: Int, _ client: HTTPClientConnection) throws -> Void)
    -> (finished: Bool, errors: [String]) {
    let errors = Mutex<[String]>([])
    let finished = DispatchGroup()
    for index in 0..<count {
        finished.enter()
        Thread.detachNewThread {
            defer { finished.leave() }
            do {
                let client = try server.connect()
                defer { client.close() }
                try body(index, client)
            } catch {
                errors.withLock { $0.append("\(index): \(error)") }
            }
        }
    }
    let ended = finished.wait(timeout: .now() + timeout) == .success
    return (ended, errors.withLock { $0 })
}

extension Atomic where Value == Int64 {
    /// Raises the value to `value` unless it is higher already.
    func raise(to value: Int64) {
        var seen = load(ordering: .sequentiallyConsistent)
        while seen < value {
            let (exchanged, original) = compareExchange(expected: seen, desired: value, ordering: .sequentiallyConsistent)
            if exchanged { return }
            seen = original
        }
    }
}
