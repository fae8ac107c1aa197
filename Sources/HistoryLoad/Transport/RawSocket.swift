import Glibc
import HTTPCore

/// Plain socket calls for the event-driven transport and the idle holders:
/// HTTPCore's `Socket` is blocking with timeouts, and a loop must never block.
enum RawSocket {
    /// A TCP socket with `connect` started: non-blocking sockets usually
    /// answer EINPROGRESS and finish later (writable, then `SO_ERROR`).
    /// - Returns: the descriptor, or nil with `errno` set.
    static func startConnect(to endpoint: ServerEndpoint, nonBlocking: Bool) -> Int32? {
        guard let address = SocketAddress(host: endpoint.host, port: endpoint.port) else {
            errno = EINVAL
            return nil
        }
        let family: Int32
        switch address {
        case .v4: family = AF_INET
        case .v6: family = AF_INET6
        }
        let flags = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | (nonBlocking ? Int32(SOCK_NONBLOCK.rawValue) : 0)
        let fd = socket(family, flags, 0)
        guard fd >= 0 else { return nil }
        var one: Int32 = 1
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        let result: Int32
        switch address {
        case .v4(var a):
            result = withUnsafePointer(to: &a) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        case .v6(var a):
            result = withUnsafePointer(to: &a) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
        }
        if result == 0 || errno == EINPROGRESS { return fd }
        let saved = errno
        close(fd)
        errno = saved
        return nil
    }

    /// The outcome of a non-blocking connect once the socket turned writable: 0 or an errno.
    static func pendingError(_ fd: Int32) -> Int32 {
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        if getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0 { return errno }
        return error
    }

    static func describe(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}
