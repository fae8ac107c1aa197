import HistoryStore

/// The roles one reader connection read, each with the conversation's
/// `members_version` it was read under (migrations/0007). A role is
/// answered only when the version the caller read in its own snapshot is
/// the cached one: every change of a membership moves the version in the
/// same transaction (`SQLiteWriter.membershipChanged`), so a matching
/// version means the members table holds exactly the cached role in that
/// snapshot. Access stays decided in the snapshot; the members' index is
/// walked only after a membership changed.
///
/// Why: in tokens mode every read needs the caller's role, and the walk
/// down the members' primary key touches index pages the page itself never
/// needs (about 3% of a deep page's CPU, docs/performance.md, "What tokens
/// mode's time is made of"); the version is a column of the conversation
/// row the read fetches anyway.
///
/// One per reader (`SQLiteReader`), used by the thread that holds it: no
/// lock. Bounded: when full it starts over.
final class SQLiteMemberRoleCache {
    private struct Key: Hashable {
        let seq: Int64
        let user: String
    }

    private var roles: [Key: (version: Int64, role: MemberRole?)] = [:]
    private let capacity: Int

    init(capacity: Int = 100_000) {
        self.capacity = capacity
    }

    /// The role of `user` (nil: not a member) if it was read under `version`.
    func role(of user: UserID, seq: Int64, version: Int64) -> MemberRole?? {
        guard let cached = roles[Key(seq: seq, user: user.rawValue)], cached.version == version else { return nil }
        return .some(cached.role)
    }

    func remember(_ role: MemberRole?, of user: UserID, seq: Int64, version: Int64) {
        if roles.count >= capacity { roles.removeAll(keepingCapacity: true) }
        roles[Key(seq: seq, user: user.rawValue)] = (version, role)
    }
}
