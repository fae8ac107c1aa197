/// Member writes, inside the batch transaction like every write: they are
/// ordered with the messages around them, and a member added in a batch is
/// durable when its caller is answered.
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
                SELECT \(StoredRows.memberColumns) FROM members WHERE conversation_seq = ? AND user_id = ?
                """).firstRow(seq, user.rawValue, map: StoredRows.member) ?? nil
        }
    }

    /// Runs `body`, a request that writes more than one row, as one unit
    /// inside the batch transaction: when it fails, what it wrote is undone
    /// and the batch's other requests still commit. A savepoint costs about
    /// as much as the INSERT it guards, so only such rare requests use one.
    /// When the savepoint itself cannot be released or rolled back, the whole
    /// transaction is ended and a `.storage` error thrown, which makes
    /// `perform` fail the batch rather than commit half a request.
    func asOneUnit<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        try sqlite { () throws(SQLiteError) in try connection.cachedStatement(sql: "SAVEPOINT request").execute() }
        let value: T
        do {
            value = try body()
        } catch {
            do throws(SQLiteError) {
                try connection.cachedStatement(sql: "ROLLBACK TO request").execute()
                try connection.cachedStatement(sql: "RELEASE request").execute()
            } catch let undoError {
                connection.rollback()
                throw StoreError(undoError)
            }
            throw error
        }
        do throws(SQLiteError) {
            try connection.cachedStatement(sql: "RELEASE request").execute()
        } catch {
            connection.rollback()
            throw StoreError(error)
        }
        return value
    }
}
