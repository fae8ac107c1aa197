/// One conversation in a user's inbox: the conversation, the user's role in
/// it, its last message and the user's read state, as of ``activity``.
///
/// The JSON is flat (`last_read_id`, `unread_count`... beside
/// `conversation`); the read fields are gathered in ``read`` here because
/// they are also what moving the marker answers.
public struct HistoryInboxRow: Codable, Hashable, Sendable, Identifiable {
    public var conversation: HistoryConversation
    public var role: HistoryMemberRole
    /// The conversation's newest message, a tombstone if it was deleted (a
    /// delete does not move a conversation down the list); nil while the
    /// conversation is empty.
    public var lastMessage: HistoryMessage?
    public var read: HistoryReadState
    /// The server-wide change counter at this row's last change (to the
    /// conversation, its members, or the user's marker): of two copies of a
    /// row, the one with the higher activity is the fresher.
    public var activity: Int64

    /// The conversation's id.
    public var id: String { conversation.id }

    public init(conversation: HistoryConversation, role: HistoryMemberRole, lastMessage: HistoryMessage?,
                read: HistoryReadState, activity: Int64) {
        self.conversation = conversation
        self.role = role
        self.lastMessage = lastMessage
        self.read = read
        self.activity = activity
    }

    enum CodingKeys: String, CodingKey {
        case conversation
        case role
        case lastMessage = "last_message"
        case activity
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        conversation = try container.decode(HistoryConversation.self, forKey: .conversation)
        role = try container.decode(HistoryMemberRole.self, forKey: .role)
        lastMessage = try container.decodeIfPresent(HistoryMessage.self, forKey: .lastMessage)
        activity = try container.decode(Int64.self, forKey: .activity)
        // The read fields sit in the same object.
        read = try HistoryReadState(from: decoder)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(conversation, forKey: .conversation)
        try container.encode(role, forKey: .role)
        try container.encode(lastMessage, forKey: .lastMessage)
        try container.encode(activity, forKey: .activity)
        try read.encode(to: encoder)
    }
}
