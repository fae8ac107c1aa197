/// One keyset page of a user's inbox: the conversations with the most
/// recent message first, those without messages last (by id).
///
/// Page on ``nextCursor``, never on the count: the server may answer fewer
/// rows than asked (its response budget) and still have more.
public struct HistoryInboxPage: Codable, Hashable, Sendable {
    public var conversations: [HistoryInboxRow]
    /// Opaque; the `cursor` of the next page. Nil on the last page.
    public var nextCursor: String?
    /// The server-wide change counter when the page was read: the `since`
    /// of an ``InboxFeed`` that tells what changed afterwards.
    public var activity: Int64

    public init(conversations: [HistoryInboxRow], nextCursor: String?, activity: Int64) {
        self.conversations = conversations
        self.nextCursor = nextCursor
        self.activity = activity
    }

    enum CodingKeys: String, CodingKey {
        case conversations
        case nextCursor = "next_cursor"
        case activity
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(conversations, forKey: .conversations)
        try container.encode(nextCursor, forKey: .nextCursor)
        try container.encode(activity, forKey: .activity)
    }
}
