import HistoryStore

/// Every write's `AccessCheck`, decided inside the batch's transaction.
///
/// The batch holds its conversations' row locks from its first statement,
/// and every member change takes the same lock, so a role read under the
/// lock cannot change before COMMIT except by this batch's own member
/// changes (which update `callerRoles`): a removal through any instance
/// either committed before (and is seen) or waits for this batch. The
/// roles are read for the whole batch in one statement, so a run of
/// appends stays one round trip.
extension PostgresBatch {
    /// A caller in a conversation, by seq.
    struct CallerKey: Hashable {
        let seq: Int64
        let user: String
    }

    /// Reads, in one statement, the roles of every caller the batch names
    /// in every conversation it locked.
    func prefetchRoles(of batch: [WriteRequest]) throws(PostgresError) {
        var keys: [CallerKey] = []
        for request in batch {
            guard let target = request.target, let user = target.access.user,
                  let seq = seqs[target.conversation.rawValue] else { continue }
            let key = CallerKey(seq: seq, user: user.rawValue)
            guard callerRoles[key] == nil else { continue }
            callerRoles[key] = .some(nil)
            keys.append(key)
        }
        guard !keys.isEmpty else { return }
        // User ids are [A-Za-z0-9_.@-]: nothing to escape in a quoted element.
        let users = "{" + keys.map { "\"\($0.user)\"" }.joined(separator: ",") + "}"
        let result = try connection.execute(connection.cachedStatement(sql: """
            SELECT m.conversation_seq, m.user_id, m.role
            FROM unnest($1::bigint[], $2::text[]) AS k(seq, user_id)
            JOIN members AS m ON m.conversation_seq = k.seq AND m.user_id = k.user_id
            """), [.text(PostgresArrayLiteral.int64s(keys.map(\.seq))), .text(users)])
        for row in 0..<result.rowCount {
            callerRoles[CallerKey(seq: result.int64(row, 0), user: result.string(row, 1))] =
                .some(MemberRole(rawValue: result.string(row, 2)))
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
