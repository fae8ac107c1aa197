/// What a member may do in its conversation: an `owner` also manages the
/// member list. The raw values are the contract's and the stored text.
public enum MemberRole: String, Sendable, Hashable {
    case member
    case owner
}

/// One user listed in a conversation's members.
public struct Member: Hashable, Sendable {
    public var userID: UserID
    public var role: MemberRole
    /// When the user was first added; changing its role keeps it.
    public var joinedAt: Timestamp

    public init(userID: UserID, role: MemberRole, joinedAt: Timestamp) {
        self.userID = userID
        self.role = role
        self.joinedAt = joinedAt
    }
}
