/// A user id as tokens carry it in `sub`: 1 to 64 characters of
/// `[A-Za-z0-9_.@-]`, so it can appear in a path segment, a log line and a
/// database key without escaping.
///
/// Stand-in until the store module defines the same type (the membership
/// tables key on it): when it does, this file is deleted and the store's
/// `UserID` is used unchanged, since the API is the same.
public struct UserID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let rawValue: String

    /// nil when `text` breaks the rule.
    public init?(_ text: some StringProtocol) {
        let utf8 = text.utf8
        guard (1...64).contains(utf8.count), utf8.allSatisfy(UserID.isAllowed) else { return nil }
        rawValue = String(text)
    }

    public static func < (lhs: UserID, rhs: UserID) -> Bool {
        lhs.rawValue.utf8.lexicographicallyPrecedes(rhs.rawValue.utf8)
    }

    public var description: String { rawValue }

    private static func isAllowed(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "@"), UInt8(ascii: "-"):
            true
        default:
            false
        }
    }
}
