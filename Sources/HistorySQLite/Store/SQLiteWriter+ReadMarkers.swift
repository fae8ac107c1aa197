import HistoryStore
/// Moving a member's read marker, inside the batch transaction: at most
/// one write, to the member's own row (the conversation does not change).
extension SQLiteWriter {
    /// Forward only, clamped to the conversation's newest message (as the
    /// batch sees it: a message appended earlier in the same batch counts).
    /// A marker that does not move writes nothing and takes no `activity`.
    /// The answer's unread state is read in the same transaction.
    func markRead(_ user: UserID, in conversation: ConversationID, upTo messageID: Int64,
                  access: AccessCheck = .admin) throws(StoreError) -> ReadState {
        guard let seq = try seq(of: conversation) else { throw .conversationNotFound(conversation) }
        try check(access, seq: seq, in: conversation)
        let found = try sqlite { () throws(SQLiteError) in
            try connection.cachedStatement(sql: """
                SELECT last_read_id FROM members NOT INDEXED WHERE conversation_seq = ? AND user_id = ?
                """).firstRow(seq, user.rawValue) { row in row.optionalInt64(0) }
        }
        guard let current = found else { throw .memberNotFound(conversation, user) }
        var marker = current
        let counters = try self.counters(seq: seq, id: conversation)
        if let newest = counters.lastAppendedID ?? counters.storedNewestID {
            let target = min(max(messageID, 0), newest)
            // 0 reads nothing, as a null marker: from null to 0 is no move.
            if target > (current ?? 0) {
                let activity = try takeActivity()
                try sqlite { () throws(SQLiteError) in
                    try connection.cachedStatement(sql: """
                        UPDATE members SET last_read_id = ?, activity = ? WHERE conversation_seq = ? AND user_id = ?
                        """).execute(target, activity, seq, user.rawValue)
                }
                marker = target
                batchInboxUsers.insert(user.rawValue)
            }
        }
        return try UnreadScan.readState(connection, seq: seq, user: user, lastReadID: marker)
    }
}
