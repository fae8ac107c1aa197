/// The answer to adding or changing a member.
///
/// The call is idempotent, so a retry after a timeout is safe; ``wasAdded``
/// tells whether this call made the user a member (201) or found it one
/// already, with the role now set (200).
public struct MemberUpdate: Hashable, Sendable {
    public var member: HistoryMember
    public var wasAdded: Bool

    public init(member: HistoryMember, wasAdded: Bool) {
        self.member = member
        self.wasAdded = wasAdded
    }
}
