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

extension ConversationID {
    /// The id of a conversation created without one: 20 random characters
    /// of [A-Za-z0-9], about 119 bits, so collisions are checked for but
    /// never expected.
    package static func generated() -> ConversationID {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8)
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<20).map { _ in alphabet[Int(generator.next(upperBound: UInt64(alphabet.count)))] }
        // Every character is in the allowed set, so this cannot be nil.
        return ConversationID(String(decoding: bytes, as: UTF8.self))!
    }
}
