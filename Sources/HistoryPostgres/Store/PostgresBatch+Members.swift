import HistoryStore

/// Member writes, inside the batch transaction (SQLiteWriter+Members):
/// no `version` bump (that counter orders the message feed), an `activity`
/// value given to the conversation and to the member row or its removal.
/// The conversation is locked, so two instances changing one member wait
/// for each other and the second sees the first's row.
extension PostgresBatch {
    func putMember(_ user: UserID, role: MemberRole, in conversation: ConversationID,
                   access: AccessCheck = .admin) throws(PostgresError) -> Result<MemberChange, StoreError> {
        guard let seq = try seq(of: conversation) else { return .failure(.conversationNotFound(conversation)) }
        if let refusal = try refusal(access, seq: seq, in: conversation) { return .failure(refusal) }
        guard var changed = counters[seq] else { return .failure(Self.vanished(conversation)) }
        if let current = try member(user, seq: seq) {
            guard current.role != role else { return .success(.unchanged(current)) }
            let activity: Int64
            switch try takeStoredActivity(for: &changed) {
            case .success(let value): activity = value
            case .failure(let error): return .failure(error)
            }
            try connection.execute(connection.cachedStatement(sql: """
                UPDATE members SET role = $1, activity = $2 WHERE conversation_seq = $3 AND user_id = $4
                """), [.text(role.rawValue), .int64(activity), .int64(seq), .text(user.rawValue)])
            touched(changed, user: user)
            callerRoles[CallerKey(seq: seq, user: user.rawValue)] = .some(role)
            var updated = current
            updated.role = role
            changeLog.append(.member(.memberChanged, updated, seq: seq, activity: changed.activityPlace ?? activityTaken))
            return .success(.changed(updated))
        }
        let activity: Int64
        switch try takeStoredActivity(for: &changed) {
        case .success(let value): activity = value
        case .failure(let error): return .failure(error)
        }
        let added = Member(userID: user, role: role, joinedAt: .now())
        try insertMember(added, seq: seq, activity: activity)
        // The user feed must not say `removed` for a membership that stands.
        try connection.execute(connection.cachedStatement(sql: """
            DELETE FROM removed_members WHERE user_id = $1 AND conversation_seq = $2
            """), [.text(user.rawValue), .int64(seq)])
        touched(changed, user: user)
        callerRoles[CallerKey(seq: seq, user: user.rawValue)] = .some(role)
        changeLog.append(.member(.memberAdded, added, seq: seq, activity: changed.activityPlace ?? activityTaken))
        return .success(.added(added))
    }

    /// true when a member was removed (its removal recorded for the user feed).
    func removeMember(_ user: UserID, from conversation: ConversationID,
                      access: AccessCheck = .admin) throws(PostgresError) -> Result<Bool, StoreError> {
        guard let seq = try seq(of: conversation) else { return .failure(.conversationNotFound(conversation)) }
        if let refusal = try refusal(access, seq: seq, in: conversation) { return .failure(refusal) }
        guard try member(user, seq: seq) != nil else { return .success(false) }
        guard var changed = counters[seq] else { return .failure(Self.vanished(conversation)) }
        let activity: Int64
        switch try takeStoredActivity(for: &changed) {
        case .success(let value): activity = value
        case .failure(let error): return .failure(error)
        }
        try connection.execute(connection.cachedStatement(sql: """
            DELETE FROM members WHERE conversation_seq = $1 AND user_id = $2
            """), [.int64(seq), .text(user.rawValue)])
        try connection.execute(connection.cachedStatement(sql: """
            INSERT INTO removed_members (user_id, conversation_seq, activity) VALUES ($1, $2, $3)
            ON CONFLICT (user_id, conversation_seq) DO UPDATE SET activity = excluded.activity
            """), [.text(user.rawValue), .int64(seq), .int64(activity)])
        touched(changed, user: user)
        callerRoles[CallerKey(seq: seq, user: user.rawValue)] = .some(nil)
        changeLog.append(.removed(user, seq: seq, activity: changed.activityPlace ?? activityTaken))
        return .success(true)
    }

    func insertMember(_ member: Member, seq: Int64, activity: Int64) throws(PostgresError) {
        try connection.execute(connection.cachedStatement(sql: """
            INSERT INTO members (conversation_seq, user_id, role, joined_at, activity) VALUES ($1, $2, $3, $4, $5)
            """), [.int64(seq), .text(member.userID.rawValue), .text(member.role.rawValue),
                   .int64(member.joinedAt.millisecondsSinceEpoch), .int64(activity)])
    }

    /// A member change that was written: the conversation's new activity
    /// goes back with the counters, the user is in the inbox notice.
    private func touched(_ changed: Counters, user: UserID) {
        touch(changed)
        inboxUsers.insert(user.rawValue)
    }

    /// nil when not a member, or when the stored role is not one this code
    /// knows (the CHECK constraint keeps that from happening).
    private func member(_ user: UserID, seq: Int64) throws(PostgresError) -> Member? {
        let result = try connection.execute(connection.cachedStatement(sql: """
            SELECT user_id, role, joined_at FROM members WHERE conversation_seq = $1 AND user_id = $2
            """), [.int64(seq), .text(user.rawValue)])
        guard result.rowCount == 1, let role = MemberRole(rawValue: result.string(0, 1)) else { return nil }
        return Member(userID: UserID(stored: result.string(0, 0)), role: role,
                      joinedAt: Timestamp(millisecondsSinceEpoch: result.int64(0, 2)))
    }
}
