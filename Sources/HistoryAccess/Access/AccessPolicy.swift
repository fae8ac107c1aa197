import HistoryStore

/// Who may do what: the one place that decides, so no route carries a
/// check of its own and the whole table can be read (and tested) at once.
///
/// | action | user token |
/// |---|---|
/// | create a conversation | yes, under a generated id (the caller becomes its owner) |
/// | create a conversation under an id it chooses | no |
/// | read conversation, pages, events, members | members |
/// | append | members; `sender` must be the token's `sub` |
/// | edit, delete a message | members, own messages only |
/// | add, change, remove members | owners; any member may remove itself |
/// | read an inbox and its feed | its own only (`{uid}` is the token's `sub`) |
/// | move a read marker | its own only, in a conversation it is a member of |
/// | metrics | no (admin only) |
/// | the backend feed (`GET /v1/events`) | no (admin only) |
///
/// An admin (open mode, or a token with `"scope":"admin"`) may do
/// everything. A user who is not a member of the conversation gets
/// `.conversationNotFound` on every conversation action, before anything
/// about the action is weighed: the answer must be the one a missing
/// conversation gets, so a stranger learns nothing from it.
///
/// ```swift
/// let role = try store.role(of: user, in: conversation)
/// switch AccessPolicy.decide(.append(sender: "ana"), caller: .user(user), role: role) { ... }
/// ```
public enum AccessPolicy {
    /// What a request wants to do.
    public enum Action: Hashable, Sendable {
        /// `choosingID`: the body names the new conversation's id. A user
        /// may not: whether a chosen id is free would tell a stranger that
        /// a conversation it cannot see exists, and let it claim ids.
        case createConversation(choosingID: Bool)
        case readConversation
        case readPages
        case readEvents
        case readMembers
        /// `sender` as the body gives it; nil when the body leaves it out.
        case append(sender: String?)
        /// `author` is the message's sender; nil while the message is not
        /// read yet (then only membership is decided, so a stranger cannot
        /// probe which message ids exist).
        case edit(author: String?)
        case delete(author: String?)
        case putMember(target: UserID)
        case removeMember(target: UserID)
        /// The inbox (`GET /v1/users/{uid}/conversations`) or the inbox
        /// feed of `owner`: about a user, not one conversation.
        case readInbox(owner: UserID)
        /// `PUT .../members/{uid}/read` for `target`.
        case markRead(target: UserID)
        case metrics
        /// `GET /v1/events`: every change on the server.
        case readServerFeed

        /// Actions on one conversation, where a non-member sees "not found".
        var isConversationScoped: Bool {
            switch self {
            case .createConversation, .metrics, .readInbox, .readServerFeed: false
            default: true
            }
        }
    }

    /// The outcome; every refusal maps to one status and code.
    public enum Decision: Hashable, Sendable {
        case allow
        /// 404 `conversation_not_found`: the caller is not a member.
        case conversationNotFound
        /// 403 `forbidden`: the caller's role does not allow the action.
        case forbidden
        /// 403 `not_author`: editing or deleting another user's message.
        case notAuthor
        /// 403 `sender_mismatch`: a body `sender` other than the token's `sub`.
        case senderMismatch
    }

    /// Decides `action` for `caller`, whose role in the conversation is
    /// `role` (nil: not a member, or no such conversation, or not looked
    /// up because the action is not about one conversation).
    public static func decide(_ action: Action, caller: Caller, role: MemberRole?) -> Decision {
        guard case .user(let user) = caller else { return .allow }
        if action.isConversationScoped && role == nil { return .conversationNotFound }
        switch action {
        case .createConversation(let choosingID):
            return choosingID ? .forbidden : .allow
        case .readConversation, .readPages, .readEvents, .readMembers:
            return .allow
        case .append(let sender):
            guard let sender else { return .allow }
            return sender == user.rawValue ? .allow : .senderMismatch
        case .edit(let author), .delete(let author):
            guard let author else { return .allow }
            return author == user.rawValue ? .allow : .notAuthor
        case .putMember:
            return role == .owner ? .allow : .forbidden
        case .removeMember(let target):
            return role == .owner || target == user ? .allow : .forbidden
        case .readInbox(let owner):
            // An inbox lists conversations by name: another user's would
            // tell a stranger which conversations exist.
            return owner == user ? .allow : .forbidden
        case .markRead(let target):
            return target == user ? .allow : .forbidden
        case .metrics, .readServerFeed:
            return .forbidden
        }
    }
}
