/// A conversation as the contract shows it, with the counters the writer
/// keeps up to date in the same transaction as every change, so reading it
/// is one row, never a `COUNT(*)`.
public struct Conversation: Hashable, Sendable {
    public var id: ConversationID
    public var title: String?
    public var createdAt: Timestamp
    /// Every message ever appended, tombstones included: a tombstone keeps
    /// its place in the pages, so it is still counted.
    public var messageCount: Int64
    public var oldestID: Int64?
    public var newestID: Int64?
    /// The change counter: bumped once by every append, edit and delete.
    public var version: Int64

    public init(id: ConversationID, title: String?, createdAt: Timestamp, messageCount: Int64,
                oldestID: Int64?, newestID: Int64?, version: Int64) {
        self.id = id
        self.title = title
        self.createdAt = createdAt
        self.messageCount = messageCount
        self.oldestID = oldestID
        self.newestID = newestID
        self.version = version
    }
}
