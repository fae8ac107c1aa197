/// Member writes, inside the batch transaction like every write: they are
/// ordered with the messages around them, and a member added in a batch is
/// durable when its caller is answered.
///
/// A member is read by its primary key (`NOT INDEXED`: see
/// `StoreReads.MemberSQL.roleBySeq`).
///
/// Member changes do not bump the conversation's `version`: that counter
/// orders the message feed, and a client paging messages must not see a
/// change that is not in the feed.
extension Writer {
    /// Adds the member, changes its role, or writes nothing when the role
    /// is already the one asked for; at most one write.
    func putMember(_ user: UserID, role: MemberRole, in conversation: ConversationID) throws(StoreError) -> MemberChange {
        guard let seq = try seq(of: conversation) else { throw .conversationNotFound(conversation) }
        if let current = try member(user, seq: seq) {
            guard current.role != role else { return .unchanged(current) }
            try sqlite { () throws(SQLiteError) in
                try connection.cachedStatement(sql: """
                    UPDATE members SET role = ? WHERE conversation_seq = ? AND user_id = ?
                    """).execute(role.rawValue, seq, user.rawValue)
            }
            var changed = current
            changed.role = role
            return .changed(changed)
        }
        let added = Member(userID: user, role: role, joinedAt: .now())
        try insertMember(added, seq: seq)
        return .added(added)
    }

    /// One DELETE; true when it removed a row.
    func removeMember(_ user: UserID, from conversation: ConversationID) throws(StoreError) -> Bool {
        guard let seq = try seq(of: conversation) else { throw .conversationNotFound(conversation) }
        return try sqlite { () throws(SQLiteError) in
            try connection.cachedStatement(sql: """
                DELETE FROM members WHERE conversation_seq = ? AND user_id = ? RETURNING 1
                """).firstRow(seq, user.rawValue) { _ in true } ?? false
        }
    }

    func insertMember(_ member: Member, seq: Int64) throws(StoreError) {
        try sqlite { () throws(SQLiteError) in
            try connection.cachedStatement(sql: """
                INSERT INTO members (conversation_seq, user_id, role, joined_at) VALUES (?, ?, ?, ?)
                """).execute(seq, member.userID.rawValue, member.role.rawValue, member.joinedAt.millisecondsSinceEpoch)
        }
    }

    private func member(_ user: UserID, seq: Int64) throws(StoreError) -> Member? {
        try sqlite { () throws(SQLiteError) in
            try connection.cachedStatement(sql: """
                SELECT \(StoredRows.memberColumns) FROM members NOT INDEXED WHERE conversation_seq = ? AND user_id = ?
                """).firstRow(seq, user.rawValue, map: StoredRows.member) ?? nil
        }
    }
}
