/// Who asks, and the rule their request must pass, handed to the store so
/// that it decides where the data is: a read decides in the snapshot it
/// reads from, a write inside its own transaction.
///
/// Deciding outside lets a removal land between the decision and the data:
/// a role read in one snapshot and a page in the next served a removed
/// member a message committed after the removal, and a write checked before
/// its transaction was stored after its author's removal (docs/API.md,
/// "Exact revocation"). The rule itself belongs to the caller (the HTTP
/// layer's `AccessPolicy`); the store only supplies the facts it read.
public struct AccessCheck: Sendable {
    /// The user whose role the store reads; nil for an administrator, whose
    /// requests need nothing read.
    public let user: UserID?

    /// The refusal for the facts the store read, or nil to allow. `role` is
    /// the user's role in the conversation (nil: not a member); `author` is
    /// the sender of the message an edit or delete names (nil when there is
    /// no such message, and for every other request).
    public let decide: @Sendable (_ role: MemberRole?, _ author: String?) -> AccessRefusal?

    public init(user: UserID?, decide: @escaping @Sendable (_ role: MemberRole?, _ author: String?) -> AccessRefusal?) {
        self.user = user
        self.decide = decide
    }

    /// Everything allowed, nothing read: open mode, admin tokens, tools and tests.
    public static let admin = AccessCheck(user: nil) { _, _ in nil }

    /// The store's answer for a refusal in `conversation`: a non-member gets
    /// exactly what a missing conversation gets.
    package func failure(role: MemberRole?, author: String? = nil, in conversation: ConversationID) -> StoreError? {
        guard user != nil, let refusal = decide(role, author) else { return nil }
        switch refusal {
        case .notAMember: return .conversationNotFound(conversation)
        default: return .refused(refusal)
        }
    }
}

/// Why a check refused.
public enum AccessRefusal: Hashable, Sendable {
    /// Not a member: answered as a conversation that does not exist.
    case notAMember
    /// The role does not allow the action (403 `forbidden`).
    case forbidden
    /// An edit or delete of another user's message (403 `not_author`).
    case notAuthor
    /// A body `sender` other than the caller (403 `sender_mismatch`).
    case senderMismatch
}
