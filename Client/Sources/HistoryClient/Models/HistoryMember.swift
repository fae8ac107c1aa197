import Foundation

/// One user listed in a conversation's members.
public struct HistoryMember: Codable, Hashable, Sendable, Identifiable {
    /// The token `sub` of the user: 1 to 64 characters of `[A-Za-z0-9_.@-]`.
    public var userID: String
    public var role: HistoryMemberRole
    public var joinedAt: Date

    public var id: String { userID }

    public init(userID: String, role: HistoryMemberRole, joinedAt: Date) {
        self.userID = userID
        self.role = role
        self.joinedAt = joinedAt
    }

    enum CodingKeys: String, CodingKey {
        case userID = "user_id"
        case role
        case joinedAt = "joined_at"
    }
}
