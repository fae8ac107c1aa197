import Synchronization

/// A value shared between threads and escaping closures (a `Mutex` alone
/// cannot be captured by an escaping closure: it is not copyable).
public final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    public init(_ value: Value) {
        mutex = Mutex(value)
    }

    public func withLock<T: Sendable>(_ body: (inout Value) -> T) -> T {
        mutex.withLock { body(&$0) }
    }

    public var value: Value { mutex.withLock { $0 } }
}
