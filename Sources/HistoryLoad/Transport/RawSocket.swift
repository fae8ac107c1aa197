import Glibc
import HTTPCore

/// Plain socket calls for the event-driven transport and the idle holders:
/// HTTPCore's `Socket` is blocking with timeouts, and a loop must never block.
enum RawSocket {
    /// A TCP socket with `connect` started: non-blocking sockets usually
    /// answer EINPROGRESS and finish later (writable, then `SO_ERROR`).
    /// - Parameters:
    ///   - source: an IPv4 address to connect from (`abuse` gives each
    ///     attacking client its own 127.x.y.z, so a server that counts per
    ///     peer address tells it from the normal users); ignored for IPv6.
    ///   - receiveBuffer: `SO_RCVBUF` in bytes, set before the handshake so the window stays small.
    /// - Returns: the descriptor, or nil with `errno` set.
    static func startConnect(to endpoint: ServerEndpoint, nonBlocking: Bool, from source: String? = nil,
                             receiveBuffer: Int32? = nil) -> Int32? {
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
        if var size = receiveBuffer {
            _ = setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        if let source, case .v4 = address, case .v4(var local)? = SocketAddress(host: source, port: 0) {
            // IP_BIND_ADDRESS_NO_PORT: the port is picked at connect, per destination, so thousands fit.
            _ = setsockopt(fd, Int32(IPPROTO_IP), 24, &one, socklen_t(MemoryLayout<Int32>.size))
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            if bound != 0 {
                let saved = errno
                close(fd)
                errno = saved
                return nil
            }
        }
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
