import Foundation

/// A value behind an `NSLock`, for the few bits of client state that change
/// after initialization.
///
/// Not `Mutex` from Synchronization: that needs iOS 18 / macOS 15, and this
/// library supports iOS 17 and macOS 14.
///
/// The use of `@unchecked Sendable` is safe for this type because:
/// - `value` is private and read or written only inside `withLock`, while
///   `lock` is held, so no two threads touch it at once;
/// - `Value` is itself `Sendable`, so what leaves the lock may cross threads;
/// - `lock` is a `let` and `NSLock` is thread-safe.
final class LockedBox<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
