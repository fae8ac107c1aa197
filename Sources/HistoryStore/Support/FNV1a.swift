/// FNV-1a, 64 bits: a fast, stable, dependency-free hash.
///
/// Used where the store needs the same number for the same bytes on every
/// platform and in every release (migration checksums, client fingerprints);
/// Swift's `Hasher` is seeded per process and CryptoKit is not on Linux. Not
/// for security: nothing here defends against a chosen collision, and
/// nothing needs to (a client can only collide with its own `client_id`).
///
/// Related documentation: <http://www.isthe.com/chongo/tech/comp/fnv/>
package struct FNV1a64 {
    package private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    package init() {}

    package mutating func combine<Bytes: Sequence<UInt8>>(_ bytes: Bytes) {
        var hash = value
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        value = hash
    }

    /// The same over raw bytes, not generic: the generic `combine` is not
    /// specialized across modules, and an `ETag` (seven combines per page)
    /// cost about 900 instructions per call through it (callgrind).
    package mutating func combine(raw bytes: UnsafeRawBufferPointer) {
        var hash = value
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        value = hash
    }

    package static func hash<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> UInt64 {
        var hasher = FNV1a64()
        hasher.combine(bytes)
        return hasher.value
    }

    /// 16 lowercase hex digits, zero-padded: the form stored in `schema_migrations`.
    package static func hex(_ value: UInt64) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16)
        for shift in stride(from: 60, through: 0, by: -4) {
            bytes.append(digits[Int((value >> UInt64(shift)) & 0xF)])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
