/// A conversation's public id: 1 to 64 characters of `[A-Za-z0-9_-]`.
///
/// Validated once, at the edge, so everything below can trust it; the check
/// works on UTF-8 bytes because a multi-byte character is never allowed.
public struct ConversationID: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String

    public static let maximumLength = 64

    /// Returns nil unless `rawValue` is a valid conversation id.
    public init?(_ rawValue: String) {
        let bytes = rawValue.utf8
        guard (1...Self.maximumLength).contains(bytes.count),
              bytes.allSatisfy(Self.isAllowed) else { return nil }
        self.rawValue = rawValue
    }

    public var description: String { rawValue }

    private static func isAllowed(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "_"), UInt8(ascii: "-"):
            return true
        default:
            return false
        }
    }
}
