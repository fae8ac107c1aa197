import HistoryStore

/// Every write's `AccessCheck`, decided inside the batch's transaction.
///
/// The batch holds its conversations' row locks from its first statement,
/// and every member change takes the same lock, so a role read under the
/// lock cannot change before COMMIT except by this batch's own member
/// changes (which update `callerRoles`): a removal through any instance
/// either committed before (and is seen) or waits for this batch. The
/// roles are read for the whole batch in one statement, sent in the same
/// pipeline as the locks, so reading them costs no round trip of its own.
extension PostgresBatch {
    /// A caller in a conversation, by seq.
    struct CallerKey: Hashable {
        let seq: Int64
        let user: String
    }

    /// The statement that reads the roles of every caller the batch names
    /// in every conversation it names, or nil when no request names a
    /// caller. Keyed by the conversations' public ids, not their seqs, so
    /// it is sent in the pipeline that locks them (`begin`), right after
    /// the lock: the seqs are not known before that pipeline's answer. The
    /// seq is a scalar subquery so that both columns of the members' key
    /// are the index condition (see `clientIDPrefetch`).
    func rolePrefetch(of batch: [WriteRequest]) -> PGPipelineStatement? {
        var seen = Set<[String]>()
        var conversations: [String] = []
        var users: [String] = []
        for request in batch {
            guard let target = request.target, let user = target.access.user,
                  seen.insert([target.conversation.rawValue, user.rawValue]).inserted else { continue }
            conversations.append(target.conversation.rawValue)
            users.append(user.rawValue)
        }
        guard !conversations.isEmpty else { return nil }
        // Conversation ids are [A-Za-z0-9_-] and user ids [A-Za-z0-9_.@-]:
        // nothing to escape in a quoted element.
        return PGPipelineStatement("""
            SELECT m.conversation_seq, m.user_id, m.role
            FROM unnest($1::text[], $2::text[]) AS k(conversation_id, user_id)
            JOIN members AS m
                ON m.conversation_seq = (SELECT c.seq FROM conversations AS c WHERE c.id = k.conversation_id)
               AND m.user_id = k.user_id
            """, [.text(PostgresArrayLiteral.texts(conversations)), .text(PostgresArrayLiteral.texts(users))])
    }

    /// Records the roles `rolePrefetch` read, for the conversations the
    /// batch locked (`seqs`, known by then): a caller without a row there
    /// is known not to be a member. A row of a conversation created since
    /// the lock statement (not locked yet) is left out: its role is read
    /// again once it is locked (`refusal`).
    func adoptRoles(_ result: PGResult?, of batch: [WriteRequest]) {
        for request in batch {
            guard let target = request.target, let user = target.access.user,
                  let seq = seqs[target.conversation.rawValue] else { continue }
            let key = CallerKey(seq: seq, user: user.rawValue)
            if callerRoles[key] == nil { callerRoles[key] = .some(nil) }
        }
        guard let result else { return }
        for row in 0..<result.rowCount {
            let seq = result.int64(row, 0)
            guard counters[seq] != nil else { continue }
            callerRoles[CallerKey(seq: seq, user: result.string(row, 1))] = .some(MemberRole(rawValue: result.string(row, 2)))
        }
    }

    /// The refusal of `access` in the locked conversation `seq`, or nil.
    /// A caller not prefetched (a conversation locked later) is read now.
    func refusal(_ access: AccessCheck, seq: Int64, in conversation: ConversationID,
                 author: String? = nil) throws(PostgresError) -> StoreError? {
        guard let user = access.user else { return nil }
        let key = CallerKey(seq: seq, user: user.rawValue)
        let role: MemberRole?
        if let known = callerRoles[key] {
            role = known
        } else {
            let result = try connection.execute(connection.cachedStatement(sql: """
                SELECT role FROM members WHERE conversation_seq = $1 AND user_id = $2
                """), [.int64(seq), .text(user.rawValue)])
            role = result.rowCount == 1 ? MemberRole(rawValue: result.string(0, 0)) : nil
            callerRoles[key] = .some(role)
        }
        return access.failure(role: role, author: author, in: conversation)
    }
}
