import Foundation

/// One message as the server shows it.
///
/// A deleted message is a tombstone: it keeps its id and its place in the
/// conversation, ``deleted`` is true and ``body`` is empty, so a screen can
/// render "message deleted" where it was. ``version`` is the conversation's
/// change counter at this message's last change: of two copies of the same
/// message, the one with the higher version is the fresher.
public struct HistoryMessage: Codable, Hashable, Sendable, Identifiable {
    /// Unique across the server, increasing in commit order within a conversation.
    public var id: Int64
    public var conversationID: String
    public var sender: String
    public var body: String
    public var createdAt: Date
    public var editedAt: Date?
    public var deleted: Bool
    public var replyTo: Int64?
    public var clientID: String?
    public var version: Int64

    public init(id: Int64, conversationID: String, sender: String, body: String, createdAt: Date,
                editedAt: Date? = nil, deleted: Bool = false, replyTo: Int64? = nil,
                clientID: String? = nil, version: Int64) {
        self.id = id
        self.conversationID = conversationID
        self.sender = sender
        self.body = body
        self.createdAt = createdAt
        self.editedAt = editedAt
        self.deleted = deleted
        self.replyTo = replyTo
        self.clientID = clientID
        self.version = version
    }

    enum CodingKeys: String, CodingKey {
        case id
        case conversationID = "conversation_id"
        case sender
        case body
        case createdAt = "created_at"
        case editedAt = "edited_at"
        case deleted
        case replyTo = "reply_to"
        case clientID = "client_id"
        case version
    }
}
