/// What a member may do in a conversation besides reading and posting.
public enum HistoryMemberRole: String, Codable, Hashable, Sendable, CaseIterable {
    /// Reads, posts, edits and deletes its own messages, leaves.
    case member
    /// Also adds, changes and removes members.
    case owner
}
