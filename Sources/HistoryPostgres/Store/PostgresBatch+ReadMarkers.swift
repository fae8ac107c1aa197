import HistoryStore

/// Moving a member's read marker, inside the batch transaction (SQLite's
/// SQLiteWriter+ReadMarkers): at most one write, to the member's own row.
extension PostgresBatch {
    /// Forward only, clamped to the conversation's newest message as the
    /// batch sees it (one appended earlier in the same batch counts). A
    /// marker that does not move writes nothing and takes no `activity`.
    /// The unread state is read in the same transaction, with the reads'
    /// bounded scan (`PostgresUnread`).
    func markRead(_ user: UserID, in conversation: ConversationID, upTo messageID: Int64,
                  access: AccessCheck = .admin) throws(PostgresError) -> Result<ReadState, StoreError> {
        guard let seq = try seq(of: conversation) else { return .failure(.conversationNotFound(conversation)) }
        if let refusal = try refusal(access, seq: seq, in: conversation) { return .failure(refusal) }
        let found = try connection.execute(connection.cachedStatement(sql: """
            SELECT last_read_id FROM members WHERE conversation_seq = $1 AND user_id = $2
            """), [.int64(seq), .text(user.rawValue)])
        guard found.rowCount == 1 else { return .failure(.memberNotFound(conversation, user)) }
        let current = found.optionalInt64(0, 0)
        var marker = current
        guard let locked = counters[seq] else { return .failure(Self.vanished(conversation)) }
        if let newest = locked.lastAppendedID ?? locked.storedNewestID {
            let target = min(max(messageID, 0), newest)
            // 0 reads nothing, as a null marker: from null to 0 is no move.
            if target > (current ?? 0) {
                let activity: Int64
                switch try takeStoredActivity() {
                case .success(let taken): activity = taken.value
                case .failure(let error): return .failure(error)
                }
                try connection.execute(connection.cachedStatement(sql: """
                    UPDATE members SET last_read_id = $1, activity = $2 WHERE conversation_seq = $3 AND user_id = $4
                    """), [.int64(target), .int64(activity), .int64(seq), .text(user.rawValue)])
                marker = target
                inboxUsers.insert(user.rawValue)
            }
        }
        do throws(StoreError) {
            return .success(try PostgresUnread.readState(connection, seq: seq, user: user, lastReadID: marker))
        } catch {
            // A failed statement: the transaction is aborted, the batch fails.
            throw PostgresError(kind: connection.isBroken ? .connectionLost : .other, message: error.description)
        }
    }
}

