import Foundation

/// A conversation with the counters the server keeps for it.
public struct HistoryConversation: Codable, Hashable, Sendable, Identifiable {
    /// 1 to 64 characters of `[A-Za-z0-9_-]`.
    public var id: String
    public var title: String?
    public var createdAt: Date
    /// Every message ever appended, tombstones included (they keep their place).
    public var messageCount: Int64
    /// Nil while the conversation is empty.
    public var oldestID: Int64?
    public var newestID: Int64?
    /// The change counter: starts at 0, +1 per append, edit and delete.
    /// A good `since` for an event stream that starts now.
    public var version: Int64

    public init(id: String, title: String?, createdAt: Date, messageCount: Int64,
                oldestID: Int64?, newestID: Int64?, version: Int64) {
        self.id = id
        self.title = title
        self.createdAt = createdAt
        self.messageCount = messageCount
        self.oldestID = oldestID
        self.newestID = newestID
        self.version = version
    }

    enum CodingKeys: String, CodingKey {
        case id
        case title
        case createdAt = "created_at"
        case messageCount = "message_count"
        case oldestID = "oldest_id"
        case newestID = "newest_id"
        case version
    }
}
