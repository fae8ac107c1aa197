import Glibc

/// A failed system call: which one, and the `errno` it left.
///
/// A struct rather than an enum because errno values are an open set; callers
/// compare `errno` with the Glibc constants (`EADDRINUSE`, `ECONNREFUSED`...).
public struct SocketError: Error, Hashable, CustomStringConvertible {
    public var errno: Int32
    public var function: String

    public init(errno: Int32, function: String) {
        self.errno = errno
        self.function = function
    }

    public var description: String {
        "\(function) failed: \(String(cString: strerror(errno))) (errno \(errno))"
    }
}

/// Runs one system call, retrying it while it fails with `EINTR` (a signal
/// interrupted it; nothing went wrong) and throwing every other failure with
/// its errno, the shape of SwiftNIO's `syscall(blocking:)`.
@inline(__always)
func systemCall<T: FixedWidthInteger>(_ function: StaticString,
                                      _ body: () -> T) throws(SocketError) -> T {
    while true {
        let result = body()
        if result != -1 { return result }
        let code = Glibc.errno
        if code == EINTR { continue }
        throw SocketError(errno: code, function: "\(function)")
    }
}

/// Like `systemCall`, but `EAGAIN`/`EWOULDBLOCK` (a non-blocking socket has
/// nothing to give or no room to take) comes back as `nil` instead of an
/// error: it is the normal way out of every read and write loop.
@inline(__always)
func nonBlockingCall<T: FixedWidthInteger>(_ function: StaticString,
                                           _ body: () -> T) throws(SocketError) -> T? {
    while true {
        let result = body()
        if result != -1 { return result }
        let code = Glibc.errno
        if code == EINTR { continue }
        if code == EAGAIN || code == EWOULDBLOCK { return nil }
        throw SocketError(errno: code, function: "\(function)")
    }
}
