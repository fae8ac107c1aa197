/// A user id as tokens carry it in `sub`: 1 to 64 characters of `[A-Za-z0-9_.@-]`.
///
/// Validated once, at the edge (the token verifier, a path segment), so the
/// store can trust it. Ordered byte by byte, as SQLite's BINARY collation
/// orders the `user_id` column: member pages use that order as their keyset,
/// and the two must agree or a page would skip or repeat members.
public struct UserID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let rawValue: String

    public static let maximumLength = 64

    /// Returns nil unless `text` is a valid user id.
    public init?(_ text: some StringProtocol) {
        let bytes = text.utf8
        guard (1...Self.maximumLength).contains(bytes.count),
              bytes.allSatisfy(Self.isAllowed) else { return nil }
        self.rawValue = String(text)
    }

    /// A value read back from the store, which only ever stored valid ids.
    package init(stored rawValue: String) {
        self.rawValue = rawValue
    }

    public var description: String { rawValue }

    public static func < (lhs: UserID, rhs: UserID) -> Bool {
        lhs.rawValue.utf8.lexicographicallyPrecedes(rhs.rawValue.utf8)
    }

    private static func isAllowed(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "@"), UInt8(ascii: "-"):
            return true
        default:
            return false
        }
    }
}
