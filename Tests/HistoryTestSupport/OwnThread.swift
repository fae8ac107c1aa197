import Foundation

/// Runs `body`, which blocks (sockets, sleeps), on a thread of its own and
/// awaits its result, so a long blocking test does not hold one of Swift's
/// cooperative threads (there are as many as cores: two on CI's machine)
/// and starve the async tests running beside it.
///
/// Swift Testing attributes `#expect` to a test through task-local state,
/// which a plain thread does not have: `body` returns what it found and
/// the test asserts on it after the `await`.
public func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try body() }) }
        thread.stackSize = 4 << 20
        thread.start()
    }
}

/// A failure found on such a thread, thrown to the awaiting test.
public struct OwnThreadFailure: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
