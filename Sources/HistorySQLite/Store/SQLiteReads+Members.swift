import HistoryStore
/// Member reads, on a reader connection.
extension SQLiteReads {
    /// The statements, named so a test can ask SQLite for their plans (an
    /// index seek each, never a scan or a sort).
    enum MemberSQL {
        /// Every user id is at least one byte long, so `user_id > ''` starts
        /// at the first member.
        static let page = """
            SELECT \(StoredRows.memberColumns) FROM members
            WHERE conversation_seq = ? AND user_id > ? ORDER BY user_id LIMIT ?
            """
        /// `NOT INDEXED` keeps SQLite on the primary key, where the row is:
        /// left to choose, it takes `members_by_user` (an equally exact
        /// match) and then needs a second seek into the table for `role`.
        static let roleBySeq = "SELECT role FROM members NOT INDEXED WHERE conversation_seq = ? AND user_id = ?"
        static let roleByConversationID = """
            SELECT conversations.seq, members.role FROM conversations
            LEFT JOIN members ON members.conversation_seq = conversations.seq AND members.user_id = ?
            WHERE conversations.id = ?
            """
    }

    /// One keyset page: a seek to (seq, after) on the primary key and a
    /// forward scan of `limit + 1` rows, the extra one only saying whether
    /// more follow. Inside the read transaction of `conversation(_:)`, so a
    /// conversation that does not exist is told apart from an empty list.
    func members(of id: ConversationID, after: UserID?, limit: Int, access: AccessCheck) throws(StoreError) -> MemberPage {
        let seq = try authorized(id, access).seq
        var members = try sqlite { () throws(SQLiteError) in
            try connection.cachedStatement(sql: MemberSQL.page)
                .rows(seq, after?.rawValue ?? "", limit + 1, map: StoredRows.member)
        }.compactMap { $0 }
        let hasMore = members.count > limit
        if hasMore { members.removeLast() }
        return MemberPage(members: members, hasMore: hasMore)
    }

    /// One statement outside any explicit transaction (a single SELECT is
    /// its own snapshot): a point lookup on the primary key when the seq
    /// cache knows the conversation, else the same lookup joined to the
    /// conversation's id, which also fills the cache for the next request.
    func role(of user: UserID, in id: ConversationID) throws(StoreError) -> MemberRole? {
        if let seq = seqCache.seq(of: id) { return try role(of: user, seq: seq) }
        let found = try sqlite { () throws(SQLiteError) in
            try connection.cachedStatement(sql: MemberSQL.roleByConversationID)
                .firstRow(user.rawValue, id.rawValue) { row in
                    (seq: row.int64(0), role: row.optionalString(1).flatMap(MemberRole.init(rawValue:)))
                }
        }
        guard let found else { return nil }
        seqCache.remember(id, seq: try MessagePlace.checkedSeq(found.seq, of: id))
        return found.role
    }

    /// The role in the conversation `seq`: one point lookup on the primary key.
    func role(of user: UserID, seq: Int64) throws(StoreError) -> MemberRole? {
        try sqlite { () throws(SQLiteError) in
            try connection.cachedStatement(sql: MemberSQL.roleBySeq)
                .firstRow(seq, user.rawValue) { MemberRole(rawValue: $0.string(0)) } ?? nil
        }
    }
}
