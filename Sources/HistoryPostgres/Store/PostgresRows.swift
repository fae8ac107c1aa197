import HistoryStore

/// The column lists the PostgreSQL reads select, and how a result row
/// becomes a value: one place, so every statement decodes the same columns
/// the same way (the PostgreSQL side of SQLite's `StoredRows`).
///
/// Rows come in PostgreSQL's binary format: integers as 8 bytes, text and
/// the `bytea` free-text columns (0003_text_bytes) as their UTF-8 bytes,
/// copied straight from libpq's buffer into `MessageRows`.
enum PostgresRows {
    /// A message's columns (9), from the table or subquery named `alias`.
    static func messageColumns(_ alias: String) -> String {
        ["id", "sender", "body", "created_at", "edited_at", "deleted", "reply_to", "client_id", "version"]
            .map { "\(alias).\($0)" }.joined(separator: ", ")
    }

    static let messageColumnCount = 9

    /// A conversation's columns (7, `seq` first; its id is known to the
    /// caller), from the table or subquery named `alias`.
    static func conversationColumns(_ alias: String) -> String {
        ["seq", "title", "created_at", "message_count", "oldest_id", "newest_id", "version"]
            .map { "\(alias).\($0)" }.joined(separator: ", ")
    }

    static let conversationColumnCount = 7

    /// A page row's conversation columns and `caller_role` (PostgresReads.SQL.withPageRows).
    static let nullConversationColumns = Array(repeating: "NULL", count: conversationColumnCount + 1).joined(separator: ", ")

    /// The conversation whose columns start at `column`.
    static func conversation(_ result: PGResult, row: Int, at column: Int,
                             id: ConversationID) -> (seq: Int64, conversation: Conversation) {
        let conversation = Conversation(
            id: id,
            title: result.optionalString(row, column + 1),
            createdAt: Timestamp(millisecondsSinceEpoch: result.int64(row, column + 2)),
            messageCount: result.int64(row, column + 3),
            oldestID: result.optionalInt64(row, column + 4),
            newestID: result.optionalInt64(row, column + 5),
            version: result.int64(row, column + 6)
        )
        return (result.int64(row, column), conversation)
    }

    /// The message whose columns start at `column`; nil when the row has
    /// none there (the empty side of a LEFT JOIN).
    static func message(_ result: PGResult, row: Int, at column: Int, in conversation: ConversationID) -> Message? {
        guard !result.isNull(row, column) else { return nil }
        return Message(
            id: result.int64(row, column),
            conversationID: conversation,
            sender: result.string(row, column + 1),
            body: result.string(row, column + 2),
            createdAt: Timestamp(millisecondsSinceEpoch: result.int64(row, column + 3)),
            editedAt: result.optionalInt64(row, column + 4).map(Timestamp.init(millisecondsSinceEpoch:)),
            deleted: result.bool(row, column + 5),
            replyTo: result.optionalInt64(row, column + 6),
            clientID: result.optionalString(row, column + 7),
            version: result.int64(row, column + 8)
        )
    }

    /// Appends the page row (`PostgresPageRows`) whose columns start at
    /// `column` to `rows`: its stored JSON, or, in a `.whole` page, its
    /// columns, copied from libpq's buffer (no `String` per column).
    static func appendPageRow(_ result: PGResult, row: Int, at column: Int, to rows: inout MessageRows) {
        let id = result.int64(row, column)
        guard result.isNull(row, column + 1) else {
            return result.withUnsafeBytes(row, column + 1) { tail in rows.append(id: id, storedTail: tail) }
        }
        let fields = column + 1 // sender, body, ... as in `messageColumns` after the id
        result.withUnsafeBytes(row, fields + 1) { sender in
            result.withUnsafeBytes(row, fields + 2) { body in
                if result.isNull(row, fields + 7) {
                    append(result, row: row, id: id, at: fields, sender: sender, body: body, clientID: nil, to: &rows)
                } else {
                    result.withUnsafeBytes(row, fields + 7) { clientID in
                        append(result, row: row, id: id, at: fields, sender: sender, body: body, clientID: clientID, to: &rows)
                    }
                }
            }
        }
    }

    /// A message whose columns after its id start at `fields + 1`, as in `messageColumns`.
    private static func append(_ result: PGResult, row: Int, id: Int64, at fields: Int, sender: UnsafeBufferPointer<UInt8>,
                               body: UnsafeBufferPointer<UInt8>, clientID: UnsafeBufferPointer<UInt8>?,
                               to rows: inout MessageRows) {
        rows.append(id: id, sender: sender, body: body,
                    createdAt: Timestamp(millisecondsSinceEpoch: result.int64(row, fields + 3)),
                    editedAt: result.optionalInt64(row, fields + 4).map(Timestamp.init(millisecondsSinceEpoch:)),
                    deleted: result.bool(row, fields + 5), replyTo: result.optionalInt64(row, fields + 6),
                    clientID: clientID, version: result.int64(row, fields + 8))
    }

    /// The result's rows that hold a message (column `column` not null),
    /// ordered by the integer in that column: the order pages and feeds
    /// hand out, set here rather than trusted to a plan's output order.
    /// A plan hands them out ascending or descending (a `before` page
    /// walks the index backwards): those two are recognised in one pass,
    /// and only another order is sorted.
    static func rowsOrdered(_ result: PGResult, by column: Int) -> [Int] {
        rowsOrdered(result, 0..<result.rowCount, by: column)
    }

    /// `rows` of the result, ordered as `rowsOrdered(_:by:)` orders a whole result.
    static func rowsOrdered(_ result: PGResult, _ rows: some Collection<Int>, by column: Int) -> [Int] {
        var keyed: [(row: Int, key: Int64)] = []
        keyed.reserveCapacity(rows.count)
        var ascending = true
        var descending = true
        for row in rows where !result.isNull(row, column) {
            let key = result.int64(row, column)
            if let last = keyed.last?.key {
                ascending = ascending && last < key
                descending = descending && last > key
            }
            keyed.append((row, key))
        }
        if ascending { return keyed.map(\.row) }
        if descending { return keyed.reversed().map(\.row) }
        return keyed.sorted { $0.key < $1.key }.map(\.row)
    }

    /// A member row's columns start at `column`: user_id, role, joined_at.
    /// nil for an empty LEFT JOIN side or a role this code does not know
    /// (the table's CHECK keeps it from happening): an unreadable row grants nothing.
    static func member(_ result: PGResult, row: Int, at column: Int) -> Member? {
        guard !result.isNull(row, column), let role = MemberRole(rawValue: result.string(row, column + 1)) else { return nil }
        return Member(userID: UserID(stored: result.string(row, column)), role: role,
                      joinedAt: Timestamp(millisecondsSinceEpoch: result.int64(row, column + 2)))
    }
}
