/// What adding or changing a member did: the HTTP layer answers 201 for
/// `added` and 200 for the others, so a retried PUT is harmless.
public enum MemberChange: Hashable, Sendable {
    /// The user was not a member; it is now, joined now.
    case added(Member)
    /// The user was a member with another role; `joinedAt` is kept.
    case changed(Member)
    /// The user was already a member with this role; nothing was written.
    case unchanged(Member)

    /// The member as it is stored after the change.
    public var member: Member {
        switch self {
        case .added(let member), .changed(let member), .unchanged(let member): member
        }
    }
}
