import Foundation
import Synchronization

/// One child process started at a time, across the whole test process.
///
/// Why: the suite runs tests in parallel, and a CI run crashed inside
/// Foundation's `Process.run()` (a `memcpy` on an unmapped page) while
/// another test was starting a PostgreSQL tool with `posix_spawn`. Starting
/// children one after the other costs milliseconds; the children still run
/// side by side.
public enum ProcessLaunches {
    private static let lock = Mutex(())

    /// Runs `start` (a `Process.run()` or a `posix_spawn`) while no other
    /// start is under way.
    public static func serialized<T>(_ start: () throws -> T) rethrows -> T {
        try lock.withLock { _ in try start() }
    }
}

extension Process {
    /// `run()`, one start at a time across the tests (`ProcessLaunches`).
    public func runSerialized() throws {
        try ProcessLaunches.serialized { try run() }
    }
}
