import HistoryStore

/// The change log the backend feed reads (`GET /v1/events`,
/// migrations/0006_change_log.sql), and the creation times jumps by time
/// rely on.
///
/// Each change of a batch is recorded in memory when its own write
/// succeeded (`batchChanges`) and the rows are inserted just before COMMIT,
/// so a refused request leaves no row, and a request still makes one
/// change of its own (no savepoint): a log insert that fails fails the
/// whole batch, like the counters' write-back beside it.
extension SQLiteWriter {
    /// Inserts the batch's changes.
    func writeChangeLog() throws(SQLiteError) {
        guard !batchChanges.isEmpty else { return }
        for entry in batchChanges {
            try insertLogRow(entry)
        }
        batchChanges.removeAll(keepingCapacity: true)
    }

    /// One row at once (the bulk loader, inside its own transaction).
    func insertChange(_ entry: ChangeLogEntry) throws(StoreError) {
        try sqlite { () throws(SQLiteError) in try insertLogRow(entry) }
    }

    private func insertLogRow(_ entry: ChangeLogEntry) throws(SQLiteError) {
        try connection.cachedStatement(sql: """
            INSERT INTO change_log (activity, conversation_seq, kind, message_id, user_id, role, joined_at)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            """).execute(entry.activity, entry.conversationSeq, entry.kind.rawValue, entry.messageID, entry.userID,
                         entry.role, entry.joinedAt)
    }

    /// The `created_at` of a new message: now, unless the clock stepped
    /// back below a time already handed out, then that time. There is one
    /// writer, so times never decrease in id order, within every
    /// conversation: the first message by time at or after T is the
    /// smallest id there, which a jump by time finds by a binary search
    /// over ids (`SQLiteReads.firstMessage`).
    func creationTime() -> Timestamp {
        let now = Timestamp.now().millisecondsSinceEpoch
        lastCreatedAt = max(lastCreatedAt, now)
        return Timestamp(millisecondsSinceEpoch: lastCreatedAt)
    }

    /// The newest message's time (by id, on `messages_by_id`), or 0.
    static func loadLastCreatedAt(_ connection: SQLiteConnection) throws(StoreError) -> Int64 {
        try sqlite { () throws(SQLiteError) in
            try connection.cachedStatement(sql: "SELECT created_at FROM messages ORDER BY id DESC LIMIT 1")
                .firstRow { $0.int64(0) } ?? 0
        }
    }
}
