import Glibc

/// An IPv4 or IPv6 socket address, parsed from a literal (or `localhost`)
/// without any name lookup, so binding never blocks on DNS.
public enum SocketAddress: Sendable, CustomStringConvertible {
    case v4(sockaddr_in)
    case v6(sockaddr_in6)

    /// `host` is an IPv4 literal, an IPv6 literal (brackets allowed) or
    /// `localhost` (taken as `127.0.0.1`, the address tests and clients expect).
    public init?(host: String, port: Int) {
        guard (0...65535).contains(port) else { return nil }
        var name = host
        if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        if name.caseInsensitiveEquals("localhost") { name = "127.0.0.1" }
        var v4 = sockaddr_in()
        if inet_pton(AF_INET, name, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = in_port_t(UInt16(port).bigEndian)
            self = .v4(v4)
            return
        }
        var v6 = sockaddr_in6()
        if inet_pton(AF_INET6, name, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = in_port_t(UInt16(port).bigEndian)
            self = .v6(v6)
            return
        }
        return nil
    }

    /// Reads whatever `accept`, `getsockname` or `getaddrinfo` filled in.
    init?(storage: UnsafeRawPointer) {
        switch Int32(storage.load(as: sockaddr.self).sa_family) {
        case AF_INET: self = .v4(storage.loadUnaligned(as: sockaddr_in.self))
        case AF_INET6: self = .v6(storage.loadUnaligned(as: sockaddr_in6.self))
        default: return nil
        }
    }

    var family: Int32 {
        switch self {
        case .v4: AF_INET
        case .v6: AF_INET6
        }
    }

    public var port: Int {
        switch self {
        case .v4(let a): Int(UInt16(bigEndian: a.sin_port))
        case .v6(let a): Int(UInt16(bigEndian: a.sin6_port))
        }
    }

    /// The address without the port, as `inet_ntop` writes it.
    public var host: String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        switch self {
        case .v4(var a): _ = inet_ntop(AF_INET, &a.sin_addr, &text, socklen_t(text.count))
        case .v6(var a): _ = inet_ntop(AF_INET6, &a.sin6_addr, &text, socklen_t(text.count))
        }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `host:port`, IPv6 in brackets (`[::1]:8080`).
    public var description: String {
        switch self {
        case .v4: "\(host):\(port)"
        case .v6: "[\(host)]:\(port)"
        }
    }

    func withSockAddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) throws(SocketError) -> R) throws(SocketError) -> R {
        switch self {
        case .v4(var a):
            return try withUnsafePointer(to: &a) { (p) throws(SocketError) -> R in
                try body(UnsafeRawPointer(p).assumingMemoryBound(to: sockaddr.self), socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        case .v6(var a):
            return try withUnsafePointer(to: &a) { (p) throws(SocketError) -> R in
                try body(UnsafeRawPointer(p).assumingMemoryBound(to: sockaddr.self), socklen_t(MemoryLayout<sockaddr_in6>.size))
            }
        }
    }
}
