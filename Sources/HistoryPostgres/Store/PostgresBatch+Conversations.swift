import HistoryStore

/// Creating conversations, inside the batch transaction (SQLite's
/// SQLiteWriter+Conversations).
extension PostgresBatch {
    /// Takes an `activity` value (shared by the owner's member row) before
    /// its checks, as the SQLite writer does: a refused create skips one.
    /// The value is written with the row, so the counter's row is locked
    /// first (`takeStoredActivity`).
    ///
    /// Two instances creating the same id at once: the unique index on `id`
    /// makes the second INSERT wait for the first transaction, then `ON
    /// CONFLICT DO NOTHING` inserts nothing once it committed: exactly one
    /// gets the conversation, the other `.conversationExists`, and neither
    /// transaction is aborted. The owner's row is written only once the
    /// conversation's stands, so the pair needs no savepoint.
    func createConversation(id: ConversationID?, title: String?, owner: UserID?) throws(PostgresError)
        -> Result<Conversation, StoreError> {
        let activity: Int64
        let place: Int64
        switch try takeStoredActivity() {
        case .success(let taken): (place, activity) = taken
        case .failure(let error): return .failure(error)
        }
        let title = title?.isEmpty == false ? title : nil
        let createdAt = Timestamp.now()
        let seq: Int64
        let conversationID: ConversationID
        switch try insertConversation(id: id, title: title, createdAt: createdAt, activity: activity) {
        case .success(let inserted): (seq, conversationID) = inserted
        case .failure(let error): return .failure(error)
        }
        if let owner {
            let member = Member(userID: owner, role: .owner, joinedAt: createdAt)
            try insertMember(member, seq: seq, activity: activity)
            inboxUsers.insert(owner.rawValue)
            changeLog.append(.member(.memberAdded, member, seq: seq, activity: place))
        }
        // A new row is this transaction's alone until COMMIT: no lock to take.
        seqs[conversationID.rawValue] = seq
        counters[seq] = Counters(seq: seq, id: conversationID, version: 0, storedVersion: 0, storedMessageCount: 0,
                                 storedNewestID: nil, activity: activity, newestCreatedAt: 0)
        return .success(Conversation(id: conversationID, title: title, createdAt: createdAt, messageCount: 0,
                                     oldestID: nil, newestID: nil, version: 0))
    }

    /// The new row, under `id` or a generated id when nil; a given id
    /// already taken (by this batch, a committed row, or another
    /// instance's transaction that committed while this one waited) is
    /// `.conversationExists`.
    private func insertConversation(id: ConversationID?, title: String?, createdAt: Timestamp, activity: Int64)
        throws(PostgresError) -> Result<(seq: Int64, id: ConversationID), StoreError> {
        if let id {
            guard seqs[id.rawValue] == nil,
                  let seq = try insertRow(id: id, title: title, createdAt: createdAt, activity: activity) else {
                return .failure(.conversationExists(id))
            }
            return .success((seq, id))
        }
        for _ in 0..<8 {
            let generated = ConversationID.generated()
            guard seqs[generated.rawValue] == nil else { continue }
            if let seq = try insertRow(id: generated, title: title, createdAt: createdAt, activity: activity) {
                return .success((seq, generated))
            }
        }
        return .failure(.storageFailure("PostgreSQL: could not generate an unused conversation id"))
    }

    /// The new row's seq; nil when the id is taken.
    private func insertRow(id: ConversationID, title: String?, createdAt: Timestamp,
                           activity: Int64) throws(PostgresError) -> Int64? {
        let result = try connection.execute(connection.cachedStatement(sql: """
            INSERT INTO conversations (id, title, created_at, activity) VALUES ($1, $2, $3, $4)
            ON CONFLICT (id) DO NOTHING RETURNING seq
            """), [.text(id.rawValue), .storedText(title), .int64(createdAt.millisecondsSinceEpoch),
                   .int64(activity)])
        return result.rowCount == 1 ? result.int64(0, 0) : nil
    }
}
