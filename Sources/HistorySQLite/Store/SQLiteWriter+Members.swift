import HistoryStore
/// Member writes, inside the batch transaction like every write: they are
/// ordered with the messages around them, and a member added in a batch is
/// durable when its caller is answered.
///
/// A member is read by its primary key (`NOT INDEXED`: see
/// `SQLiteReads.MemberSQL.roleBySeq`).
///
/// Member changes do not bump the conversation's `version`: that counter
/// orders the message feed, and a client paging messages must not see a
/// change that is not in the feed. They do take an `activity` value, given
/// to both the conversation (its other members' inbox feeds show the change)
/// and the member row or its removal row (the user's own feed).
extension SQLiteWriter {
    /// Adds the member, changes its role, or writes nothing when the role
    /// is already the one asked for.
    func putMember(_ user: UserID, role: MemberRole, in conversation: ConversationID,
                   access: AccessCheck = .admin) throws(StoreError) -> MemberChange {
        guard let seq = try seq(of: conversation) else { throw .conversationNotFound(conversation) }
        try check(access, seq: seq, in: conversation)
        if let current = try member(user, seq: seq) {
            guard current.role != role else { return .unchanged(current) }
            var counters = try self.counters(seq: seq, id: conversation)
            counters.activity = try takeActivity()
            try asOneUnit { () throws(StoreError) in
                try sqlite { () throws(SQLiteError) in
                    try connection.cachedStatement(sql: """
                        UPDATE members SET role = ?, activity = ? WHERE conversation_seq = ? AND user_id = ?
                        """).execute(role.rawValue, counters.activity, seq, user.rawValue)
                }
                try membershipChanged(seq: seq)
            }
            touched(counters, seq: seq, user: user)
            var changed = current
            changed.role = role
            batchChanges.append(.member(.memberChanged, changed, seq: seq, activity: counters.activity))
            return .changed(changed)
        }
        var counters = try self.counters(seq: seq, id: conversation)
        counters.activity = try takeActivity()
        let added = Member(userID: user, role: role, joinedAt: .now())
        if try wasRemoved(user, seq: seq) {
            // Two rows: the member, and its removal forgotten (the user
            // feed must not say `removed` for a membership that stands).
            try asOneUnit { () throws(StoreError) in
                try insertMember(added, seq: seq, activity: counters.activity)
                try sqlite { () throws(SQLiteError) in
                    try connection.cachedStatement(sql: """
                        DELETE FROM removed_members WHERE user_id = ? AND conversation_seq = ?
                        """).execute(user.rawValue, seq)
                }
            }
        } else {
            try insertMember(added, seq: seq, activity: counters.activity)
        }
        touched(counters, seq: seq, user: user)
        batchChanges.append(.member(.memberAdded, added, seq: seq, activity: counters.activity))
        return .added(added)
    }

    /// true when a member was removed. Two rows (the member deleted, its
    /// removal recorded for the user feed) written as one unit: removals
    /// are rare, so their savepoint costs nothing that matters.
    func removeMember(_ user: UserID, from conversation: ConversationID, access: AccessCheck = .admin) throws(StoreError) -> Bool {
        guard let seq = try seq(of: conversation) else { throw .conversationNotFound(conversation) }
        try check(access, seq: seq, in: conversation)
        guard try member(user, seq: seq) != nil else { return false }
        var counters = try self.counters(seq: seq, id: conversation)
        counters.activity = try takeActivity()
        let activity = counters.activity
        try asOneUnit { () throws(StoreError) in
            try sqlite { () throws(SQLiteError) in
                try connection.cachedStatement(sql: """
                    DELETE FROM members WHERE conversation_seq = ? AND user_id = ?
                    """).execute(seq, user.rawValue)
                try connection.cachedStatement(sql: """
                    INSERT OR REPLACE INTO removed_members (user_id, conversation_seq, activity) VALUES (?, ?, ?)
                    """).execute(user.rawValue, seq, activity)
            }
            try membershipChanged(seq: seq)
        }
        touched(counters, seq: seq, user: user)
        batchChanges.append(.removed(user, seq: seq, activity: activity))
        return true
    }

    /// The row and the membership's new version as one unit (a savepoint:
    /// member writes are rare, and a half-written pair would let a cached
    /// role outlive its row).
    func insertMember(_ member: Member, seq: Int64, activity: Int64) throws(StoreError) {
        try asOneUnit { () throws(StoreError) in
            try sqlite { () throws(SQLiteError) in
                try connection.cachedStatement(sql: """
                    INSERT INTO members (conversation_seq, user_id, role, joined_at, activity) VALUES (?, ?, ?, ?, ?)
                    """).execute(seq, member.userID.rawValue, member.role.rawValue, member.joinedAt.millisecondsSinceEpoch,
                                 activity)
            }
            try membershipChanged(seq: seq)
        }
    }

    /// Moves the conversation's `members_version` (migrations/0007): every
    /// statement above that adds, changes or deletes a `members` row is
    /// followed by this one in the same unit, so a reader's cached role
    /// (`SQLiteMemberRoleCache`) is trusted only in snapshots where the
    /// membership is the one it was read from. Read-marker updates of a
    /// member row leave roles alone and do not call it.
    private func membershipChanged(seq: Int64) throws(StoreError) {
        batchMembershipSeqs.insert(seq)
        try sqlite { () throws(SQLiteError) in
            try connection.cachedStatement(sql: """
                UPDATE conversations SET members_version = members_version + 1 WHERE seq = ?
                """).execute(seq)
        }
    }

    /// Records a member change that was written: the conversation's new
    /// activity goes back with the batch's counters, and the user's inbox
    /// waits are woken after COMMIT.
    private func touched(_ counters: PendingCounters, seq: Int64, user: UserID) {
        pending[seq] = counters
        batchInboxUsers.insert(user.rawValue)
    }

    private func member(_ user: UserID, seq: Int64) throws(StoreError) -> Member? {
        try sqlite { () throws(SQLiteError) in
            try connection.cachedStatement(sql: """
                SELECT \(StoredRows.memberColumns) FROM members NOT INDEXED WHERE conversation_seq = ? AND user_id = ?
                """).firstRow(seq, user.rawValue, map: StoredRows.member) ?? nil
        }
    }

    /// Decides `access` inside the batch's transaction, from the role as
    /// this transaction sees it: a removal committed before is always seen,
    /// and one after waits for this commit (there is one writer).
    func check(_ access: AccessCheck, seq: Int64, in conversation: ConversationID, author: String? = nil) throws(StoreError) {
        guard let user = access.user else { return }
        if let failure = access.failure(role: try member(user, seq: seq)?.role, author: author, in: conversation) {
            throw failure
        }
    }

    private func wasRemoved(_ user: UserID, seq: Int64) throws(StoreError) -> Bool {
        try sqlite { () throws(SQLiteError) in
            try connection.cachedStatement(sql: """
                SELECT 1 FROM removed_members WHERE user_id = ? AND conversation_seq = ?
                """).firstRow(user.rawValue, seq) { _ in true } ?? false
        }
    }
}
