/// One conversation in a user's inbox: what a chat list draws per line.
public struct InboxRow: Hashable, Sendable {
    public var conversation: Conversation
    /// The user's role in it.
    public var role: MemberRole
    /// The conversation's newest message (`newestID`), tombstone or not;
    /// nil when it has none.
    public var lastMessage: Message?
    public var read: ReadState
    /// The row's last change on the server-wide `activity` counter: the
    /// later of the conversation's last change and the member's own (its
    /// marker, its role).
    public var activity: Int64

    public init(conversation: Conversation, role: MemberRole, lastMessage: Message?, read: ReadState, activity: Int64) {
        self.conversation = conversation
        self.role = role
        self.lastMessage = lastMessage
        self.read = read
        self.activity = activity
    }
}
