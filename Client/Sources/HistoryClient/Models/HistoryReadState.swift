/// Where a user stands in one conversation: its read marker and what lies
/// unread above it. The answer to moving the marker, and part of every
/// ``HistoryInboxRow``.
///
/// Unread messages are those above ``lastReadID`` that are not deleted and
/// not sent by the user. The server counts them exactly up to 999; past that
/// ``unreadCount`` stays 999 and ``unreadCapped`` is true, so a badge shows
/// "999+" instead of a number that would cost a scan of the conversation.
public struct HistoryReadState: Codable, Hashable, Sendable {
    /// The highest message id the user has read; nil before the first
    /// marker (then every message counts as unread, up to the cap).
    public var lastReadID: Int64?
    /// The lowest unread message id: open the conversation there with
    /// `around=` (``WindowIntent/openAtFirstUnread(_:)``). Nil when nothing is unread.
    public var firstUnreadID: Int64?
    /// 0...999.
    public var unreadCount: Int
    /// True when more than 999 messages are unread.
    public var unreadCapped: Bool

    /// The highest count the server reports exactly.
    public static let unreadCap = 999

    public init(lastReadID: Int64?, firstUnreadID: Int64?, unreadCount: Int, unreadCapped: Bool) {
        self.lastReadID = lastReadID
        self.firstUnreadID = firstUnreadID
        self.unreadCount = unreadCount
        self.unreadCapped = unreadCapped
    }

    /// Something is unread: show a badge.
    public var hasUnread: Bool { unreadCount > 0 }

    enum CodingKeys: String, CodingKey {
        case lastReadID = "last_read_id"
        case firstUnreadID = "first_unread_id"
        case unreadCount = "unread_count"
        case unreadCapped = "unread_capped"
    }

    /// Nulls written out, as the server does: an absent marker is `null`, not a missing key.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(lastReadID, forKey: .lastReadID)
        try container.encode(firstUnreadID, forKey: .firstUnreadID)
        try container.encode(unreadCount, forKey: .unreadCount)
        try container.encode(unreadCapped, forKey: .unreadCapped)
    }
}
