/// Where a member stands in a conversation: its read marker and what lies
/// unread above it.
///
/// Unread means above `lastReadID` (everything when it is nil), not
/// deleted, and not sent by the member itself. The count is exact up to
/// `unreadCap`; past it the store stops counting (a bounded scan, so a
/// conversation with a million unread messages costs what one with a
/// thousand costs) and says so with `unreadCapped`.
public struct ReadState: Hashable, Sendable {
    /// The highest id the member has read; nil before the first marker move.
    public var lastReadID: Int64?
    /// The lowest unread id: where a client opens the conversation.
    public var firstUnreadID: Int64?
    /// `0...unreadCap`.
    public var unreadCount: Int
    /// True when more than `unreadCap` messages are unread.
    public var unreadCapped: Bool

    /// The largest count reported exactly.
    public static let unreadCap = 999

    public init(lastReadID: Int64?, firstUnreadID: Int64?, unreadCount: Int, unreadCapped: Bool) {
        self.lastReadID = lastReadID
        self.firstUnreadID = firstUnreadID
        self.unreadCount = unreadCount
        self.unreadCapped = unreadCapped
    }
}

// MARK: - Rules

extension ReadState {
    /// A marker moves to a message id or below every message (0); past the
    /// newest message it is taken as the newest.
    public static let lastReadIDRule = IntegerRule(.lastReadID, 0...Int64.max,
                                                   requirement: "must be a message id, an integer from 0 to \(Int64.max)")
}
