import HistoryStore

/// Member reads: a keyset page of a conversation's members, and one
/// member's role.
extension PostgresReads {
    package enum MemberSQL {
        /// The conversation `$1` (columns 0...6) and up to `$3` of its
        /// members after the user id `$2` (7...9): one seek to
        /// `(seq, $2)` on the primary key and a forward walk. Every user id
        /// is at least one byte long, so `user_id > ''` starts at the first
        /// member; `user_id` is `COLLATE "C"`, so the order is byte order,
        /// as SQLite's.
        package static let page = """
            \(PostgresReads.SQL.conversationCTE)
            SELECT \(PostgresRows.conversationColumns("c")), m.user_id, m.role, m.joined_at FROM c
            LEFT JOIN LATERAL (
                SELECT user_id, role, joined_at FROM members
                WHERE conversation_seq = c.seq AND user_id > $2::text ORDER BY user_id LIMIT $3::bigint
            ) AS m ON true
            """
        /// The role of `$1` in the conversation `$2`: no row when either
        /// the conversation or the membership does not exist. Two point
        /// lookups (the conversation's id, the members' primary key).
        package static let role = """
            SELECT members.role FROM conversations
            JOIN members ON members.conversation_seq = conversations.seq AND members.user_id = $1::text
            WHERE conversations.id = $2::text
            """
    }

    /// One keyset page, `limit + 1` rows read, the extra one only saying
    /// whether more follow. One statement, so a conversation that does not
    /// exist is told apart from an empty list in the same snapshot.
    package func members(of id: ConversationID, after: UserID?, limit: Int) throws(StoreError) -> MemberPage {
        let result = try run(MemberSQL.page, [.text(id.rawValue), .text(after?.rawValue ?? ""), .int64(Int64(limit) + 1)])
        guard result.rowCount > 0 else { throw .conversationNotFound(id) }
        var members = (0..<result.rowCount)
            .compactMap { PostgresRows.member(result, row: $0, at: PostgresRows.conversationColumnCount) }
            .sorted { $0.userID < $1.userID }
        let hasMore = members.count > limit
        if hasMore { members.removeLast() }
        return MemberPage(members: members, hasMore: hasMore)
    }

    /// nil when the conversation does not exist or the user is not in it
    /// (as SQLite's); one statement, its own snapshot.
    package func role(of user: UserID, in id: ConversationID) throws(StoreError) -> MemberRole? {
        let result = try run(MemberSQL.role, [.text(user.rawValue), .text(id.rawValue)])
        guard result.rowCount > 0 else { return nil }
        return MemberRole(rawValue: result.string(0, 0))
    }
}
