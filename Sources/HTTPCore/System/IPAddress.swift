import Glibc

/// An IPv4 or IPv6 address as 16 bytes (IPv4 as `::ffff:a.b.c.d`, so an
/// IPv4 peer of a dual-stack socket is the same address as over IPv4),
/// parsed from a literal without any name lookup.
///
/// What per-client limits key on (`limitKey`) and what `--trusted-proxy`
/// networks match (`IPNetwork`).
public struct IPAddress: Hashable, Sendable, CustomStringConvertible {
    /// Network byte order.
    public let bytes: [UInt8]

    /// An IPv4 or IPv6 literal, brackets allowed around IPv6; nil otherwise.
    public init?(_ text: some StringProtocol) {
        var name = String(text)
        if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        var v4 = in_addr()
        if inet_pton(AF_INET, name, &v4) == 1 {
            self.bytes = Self.v4Prefix + withUnsafeBytes(of: &v4) { Array($0) }
            return
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, name, &v6) == 1 else { return nil }
        self.bytes = withUnsafeBytes(of: &v6) { Array($0) }
    }

    init(bytes: [UInt8]) {
        precondition(bytes.count == 16)
        self.bytes = bytes
    }

    private static let v4Prefix: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF]

    /// An IPv4 address (or IPv4-mapped IPv6 address).
    public var isV4: Bool { Array(bytes.prefix(12)) == Self.v4Prefix }

    /// `a.b.c.d`, or IPv6 as `inet_ntop` writes it.
    public var description: String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        if isV4 {
            var v4 = in_addr()
            withUnsafeMutableBytes(of: &v4) { $0.copyBytes(from: bytes[12...]) }
            _ = inet_ntop(AF_INET, &v4, &text, socklen_t(text.count))
        } else {
            var v6 = in6_addr()
            withUnsafeMutableBytes(of: &v6) { $0.copyBytes(from: bytes) }
            _ = inet_ntop(AF_INET6, &v6, &text, socklen_t(text.count))
        }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Whom a per-client limit counts: an IPv4 address as it is, an IPv6
    /// address by its /64 (`2001:db8:1:2::/64`). One IPv6 host is given a
    /// whole /64 (RFC 4291's interface identifiers; SLAAC and privacy
    /// addresses pick any of them at will), so keying by the full address
    /// would let one machine be 2^64 clients.
    public var limitKey: String {
        guard !isV4 else { return description }
        return IPAddress(bytes: Array(bytes.prefix(8)) + [UInt8](repeating: 0, count: 8)).description + "/64"
    }
}

/// A CIDR block (`10.0.0.0/8`, `2001:db8::/32`; a bare address is a block
/// of one), for `--trusted-proxy`.
public struct IPNetwork: Hashable, Sendable, CustomStringConvertible {
    public let address: IPAddress
    /// Prefix length over the 16-byte form (an IPv4 /8 is 96 + 8).
    let prefixLength: Int

    /// nil unless `text` is an address, optionally `/prefix` (0-32 for
    /// IPv4, 0-128 for IPv6).
    public init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = IPAddress(parts[0]) else { return nil }
        let maximum = address.isV4 ? 32 : 128
        var length = maximum
        if parts.count == 2 {
            guard !parts[1].isEmpty, parts[1].count <= 3, parts[1].allSatisfy({ $0.isASCII && $0.isNumber }),
                  let value = Int(parts[1]), value <= maximum else { return nil }
            length = value
        }
        self.address = address
        prefixLength = length + (address.isV4 ? 96 : 0)
    }

    public func contains(_ other: IPAddress) -> Bool {
        for bit in stride(from: 0, to: prefixLength, by: 8) {
            let width = min(8, prefixLength - bit)
            let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - width))
            if address.bytes[bit / 8] & mask != other.bytes[bit / 8] & mask { return false }
        }
        return true
    }

    public var description: String {
        "\(address)/\(address.isV4 ? prefixLength - 96 : prefixLength)"
    }
}

extension SocketAddress {
    /// The address without the port.
    public var ipAddress: IPAddress? { IPAddress(host) }
}
