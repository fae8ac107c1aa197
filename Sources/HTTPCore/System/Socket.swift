import Glibc

/// Owns one socket file descriptor and closes it exactly once.
///
/// Not `Sendable`: a socket belongs to whoever drives it (a connection's
/// serial queue, the listener's queue, or the one thread using a client).
/// A socket dropped while still open is a leak in our own code, so `deinit`
/// asserts in debug builds and closes it in release builds, as SwiftNIO's
/// `BaseSocket` does.
final class Socket {
    /// The descriptor, or -1 once closed.
    private(set) var descriptor: Int32

    init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    deinit {
        assert(descriptor < 0, "leak of open socket \(descriptor)")
        if descriptor >= 0 { _ = Glibc.close(descriptor) }
    }

    var isOpen: Bool { descriptor >= 0 }

    // MARK: - Creating

    /// A non-blocking listening socket bound to `address` with `SO_REUSEADDR`
    /// (a restarted server must not wait for TIME_WAIT to expire).
    static func listening(on address: SocketAddress, backlog: Int32) throws(SocketError) -> Socket {
        let fd = try systemCall("socket") { Glibc.socket(address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }
        let socket = Socket(descriptor: fd)
        do throws(SocketError) {
            try socket.setOption(SOL_SOCKET, SO_REUSEADDR, 1)
            if case .v6 = address { try socket.setOption(Int32(IPPROTO_IPV6), IPV6_V6ONLY, 1) }
            try address.withSockAddr { (pointer, length) throws(SocketError) in
                _ = try systemCall("bind") { Glibc.bind(fd, pointer, length) }
            }
            _ = try systemCall("listen") { Glibc.listen(fd, backlog) }
            return socket
        } catch {
            socket.close()
            throw error
        }
    }

    /// A connected socket, blocking afterwards; the connect itself gives up
    /// after `timeout` (it is made non-blocking and polled for that).
    static func connected(to address: SocketAddress, timeout: Duration) throws(SocketError) -> Socket {
        let fd = try systemCall("socket") { Glibc.socket(address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }
        let socket = Socket(descriptor: fd)
        do throws(SocketError) {
            let started = try address.withSockAddr { (pointer, length) throws(SocketError) -> Bool in
                let result = Glibc.connect(fd, pointer, length)
                if result == 0 { return true }
                let code = Glibc.errno
                guard code == EINPROGRESS || code == EINTR else { throw SocketError(errno: code, function: "connect") }
                return false
            }
            if !started {
                guard try socket.poll(events: Int16(POLLOUT), timeout: timeout) else {
                    throw SocketError(errno: ETIMEDOUT, function: "connect")
                }
                var code: Int32 = 0
                var length = socklen_t(MemoryLayout<Int32>.size)
                _ = try systemCall("getsockopt") { getsockopt(fd, SOL_SOCKET, SO_ERROR, &code, &length) }
                if code != 0 { throw SocketError(errno: code, function: "connect") }
            }
            try socket.setBlocking(true)
            try socket.setOption(Int32(IPPROTO_TCP), TCP_NODELAY, 1)
            return socket
        } catch {
            socket.close()
            throw error
        }
    }

    // MARK: - Options

    func setOption(_ level: Int32, _ name: Int32, _ value: Int32) throws(SocketError) {
        var value = value
        _ = try systemCall("setsockopt") {
            setsockopt(descriptor, level, name, &value, socklen_t(MemoryLayout<Int32>.size))
        }
    }

    func setBlocking(_ blocking: Bool) throws(SocketError) {
        let flags = try systemCall("fcntl") { fcntl(descriptor, F_GETFL) }
        let wanted = blocking ? flags & ~O_NONBLOCK : flags | O_NONBLOCK
        if wanted != flags { _ = try systemCall("fcntl") { fcntl(descriptor, F_SETFL, wanted) } }
    }

    /// `SO_RCVTIMEO` and `SO_SNDTIMEO`: a blocking read or write gives up with
    /// `EAGAIN` after this long.
    func setTimeouts(_ timeout: Duration) throws(SocketError) {
        let (seconds, attoseconds) = timeout.components
        var value = timeval(tv_sec: Int(max(0, seconds)), tv_usec: Int(max(0, attoseconds) / 1_000_000_000_000))
        if value.tv_sec == 0 && value.tv_usec == 0 { value.tv_usec = 1 }  // 0 would mean "never"
        for option in [SO_RCVTIMEO, SO_SNDTIMEO] {
            _ = try systemCall("setsockopt") {
                setsockopt(descriptor, SOL_SOCKET, option, &value, socklen_t(MemoryLayout<timeval>.size))
            }
        }
    }

    /// The address the socket is bound to (`getsockname`), e.g. for port 0.
    func localAddress() throws(SocketError) -> SocketAddress {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = try withUnsafeMutablePointer(to: &storage) { (pointer) throws(SocketError) -> Int32 in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { (address) throws(SocketError) -> Int32 in
                try systemCall("getsockname") { getsockname(descriptor, address, &length) }
            }
        }
        guard let address = withUnsafeBytes(of: &storage, { SocketAddress(storage: $0.baseAddress!) }) else {
            throw SocketError(errno: EAFNOSUPPORT, function: "getsockname")
        }
        return address
    }

    // MARK: - I/O

    /// Accepts one connection, non-blocking and close-on-exec; nil when none
    /// is waiting. Errors are the caller's to sort (EMFILE, ECONNABORTED...).
    func accept() throws(SocketError) -> (Socket, SocketAddress?)? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let fd = try withUnsafeMutablePointer(to: &storage) { (pointer) throws(SocketError) -> Int32? in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { (address) throws(SocketError) -> Int32? in
                try nonBlockingCall("accept") { Glibc.accept(descriptor, address, &length) }
            }
        }
        guard let fd else { return nil }
        let socket = Socket(descriptor: fd)
        do throws(SocketError) {
            // accept4(SOCK_NONBLOCK | SOCK_CLOEXEC) is not exported by Glibc's module map.
            try socket.setBlocking(false)
            _ = try systemCall("fcntl") { fcntl(fd, F_SETFD, FD_CLOEXEC) }
        } catch {
            socket.close()
            throw error
        }
        let address = withUnsafeBytes(of: &storage) { SocketAddress(storage: $0.baseAddress!) }
        return (socket, address)
    }

    /// Reads into `buffer`: the count read, 0 at end of input, nil when a
    /// non-blocking socket has nothing (or a blocking one timed out).
    func receive(into buffer: UnsafeMutableRawBufferPointer) throws(SocketError) -> Int? {
        try nonBlockingCall("recv") { Glibc.recv(descriptor, buffer.baseAddress, buffer.count, 0) }
    }

    /// Writes from `buffer`: the count written, nil when there is no room.
    /// `MSG_NOSIGNAL`: a vanished peer is an `EPIPE` error, never a SIGPIPE
    /// that would kill the process.
    func send(_ buffer: UnsafeRawBufferPointer) throws(SocketError) -> Int? {
        try nonBlockingCall("send") { Glibc.send(descriptor, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Waits until `events` (POLLIN, POLLOUT) are ready: false on timeout.
    func poll(events: Int16, timeout: Duration) throws(SocketError) -> Bool {
        var entry = pollfd(fd: descriptor, events: events, revents: 0)
        let milliseconds = Int32(clamping: max(0, timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000))
        let ready = try systemCall("poll") { Glibc.poll(&entry, 1, milliseconds) }
        return ready > 0
    }

    /// Half-closes: the peer reads end of input, and we can still read.
    func shutdownOutput() {
        if descriptor >= 0 { _ = Glibc.shutdown(descriptor, Int32(SHUT_WR)) }
    }

    /// Closes with a reset instead of a FIN: `SO_LINGER` of zero makes the
    /// kernel drop what it still holds to send, so a peer that stopped
    /// reading keeps neither that memory nor the socket alive, and its next
    /// `poll` reports the end at once instead of after megabytes of unread
    /// data. For a connection given up on, never for a normal close.
    func abort() {
        guard descriptor >= 0 else { return }
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        _ = Glibc.setsockopt(descriptor, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        close()
    }

    /// Closes the descriptor once; later calls do nothing. `EINTR` from close
    /// is ignored: on Linux the descriptor is released anyway, and retrying
    /// could close a descriptor another thread has just been given.
    func close() {
        guard descriptor >= 0 else { return }
        _ = Glibc.close(descriptor)
        descriptor = -1
    }
}
