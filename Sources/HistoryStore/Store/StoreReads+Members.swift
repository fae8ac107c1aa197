/// Member reads, on a reader connection.
extension StoreReads {
    /// One keyset page: a seek to (seq, after) on the primary key and a
    /// forward scan of `limit + 1` rows, the extra one only saying whether
    /// more follow. Inside the read transaction of `conversation(_:)`, so a
    /// conversation that does not exist is told apart from an empty list.
    func members(of id: ConversationID, after: UserID?, limit: Int) throws(StoreError) -> MemberPage {
        let seq = try conversation(id).seq
        // Every user id is at least one byte long, so '' is below them all.
        var members = try sqlite { () throws(SQLiteError) in
            try connection.cachedStatement(sql: """
                SELECT \(StoredRows.memberColumns) FROM members
                WHERE conversation_seq = ? AND user_id > ? ORDER BY user_id LIMIT ?
                """).rows(seq, after?.rawValue ?? "", limit + 1, map: StoredRows.member)
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
        if let seq = seqCache.seq(of: id) {
            return try sqlite { () throws(SQLiteError) in
                try connection.cachedStatement(sql: """
                    SELECT role FROM members WHERE conversation_seq = ? AND user_id = ?
                    """).firstRow(seq, user.rawValue) { MemberRole(rawValue: $0.string(0)) } ?? nil
            }
        }
        let found = try sqlite { () throws(SQLiteError) in
            try connection.cachedStatement(sql: """
                SELECT conversations.seq, members.role FROM conversations
                LEFT JOIN members ON members.conversation_seq = conversations.seq AND members.user_id = ?
                WHERE conversations.id = ?
                """).firstRow(user.rawValue, id.rawValue) { row in
                (seq: row.int64(0), role: row.optionalString(1).flatMap(MemberRole.init(rawValue:)))
            }
        }
        guard let found else { return nil }
        seqCache.remember(id, seq: found.seq)
        return found.role
    }
}
