/// One message as the contract shows it. A deleted message is a tombstone:
/// it keeps its id and place, `deleted` is true and `body` is empty.
public struct Message: Hashable, Sendable {
    public var id: Int64
    public var conversationID: ConversationID
    public var sender: String
    public var body: String
    public var createdAt: Timestamp
    public var editedAt: Timestamp?
    public var deleted: Bool
    public var replyTo: Int64?
    public var clientID: String?
    /// The conversation's version at this message's last change.
    public var version: Int64

    public init(id: Int64, conversationID: ConversationID, sender: String, body: String,
                createdAt: Timestamp, editedAt: Timestamp?, deleted: Bool, replyTo: Int64?,
                clientID: String?, version: Int64) {
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

    /// `new` as its append stores it: neither edited nor deleted. Every
    /// append path of both stores builds its answer (and the stored JSON,
    /// `MessageJSONTail`) with this, so they cannot drift apart.
    package init(appended new: NewMessage, id: Int64, in conversation: ConversationID, createdAt: Timestamp,
                 version: Int64) {
        self.init(id: id, conversationID: conversation, sender: new.sender, body: new.body, createdAt: createdAt,
                  editedAt: nil, deleted: false, replyTo: new.replyTo, clientID: new.clientID, version: version)
    }
}

/// What a caller asks to append. Validated by the store (`MessageRules`)
/// before anything is written.
public struct NewMessage: Hashable, Sendable {
    public var sender: String
    public var body: String
    public var clientID: String?
    public var replyTo: Int64?

    public init(sender: String, body: String, clientID: String? = nil, replyTo: Int64? = nil) {
        self.sender = sender
        self.body = body
        self.clientID = clientID
        self.replyTo = replyTo
    }
}

/// The answer to an append: a new message, or the one an earlier append
/// with the same `client_id` stored (HTTP 201 versus 200).
public enum AppendOutcome: Hashable, Sendable {
    case created(Message)
    case existing(Message)

    public var message: Message {
        switch self {
        case .created(let message), .existing(let message): message
        }
    }
}
