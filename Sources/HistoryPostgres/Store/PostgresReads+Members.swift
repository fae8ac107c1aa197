import HistoryStore

/// Member reads: a keyset page of a conversation's members, and one
/// member's role.
extension PostgresReads {
    package enum MemberSQL {
        /// The conversation `$1` with the caller `$2`'s role (columns
        /// 0...7) and up to `$4` of its members after the user id `$3` (8...10): one seek to
        /// `(seq, $2)` on the primary key and a forward walk. Every user id
        /// is at least one byte long, so `user_id > ''` starts at the first
        /// member; `user_id` is `COLLATE "C"`, so the order is byte order,
        /// as SQLite's.
        package static let page = """
            \(PostgresReads.SQL.conversationCTE)
            SELECT \(PostgresReads.SQL.conversationColumns), m.user_id, m.role, m.joined_at FROM c
            LEFT JOIN LATERAL (
                SELECT user_id, role, joined_at FROM members
                WHERE conversation_seq = c.seq AND user_id > $3::text ORDER BY user_id LIMIT $4::bigint
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
    package func members(of id: ConversationID, after: UserID?, limit: Int, access: AccessCheck) throws(StoreError) -> MemberPage {
        let (_, result) = try conversationRead(MemberSQL.page, id, access, [.text(after?.rawValue ?? ""), .int64(Int64(limit) + 1)])
        var members = (0..<result.rowCount)
            .compactMap { PostgresRows.member(result, row: $0, at: PostgresReads.SQL.columnCount) }
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
