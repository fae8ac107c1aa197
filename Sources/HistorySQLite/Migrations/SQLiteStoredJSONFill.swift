import HistoryStore

/// Gives every message row written before migration 0008 its stored JSON
/// (`json_tail`, `MessageJSONTail`), at open, before the store serves.
///
/// Why at open and not in the migration: the bytes must be the API's, and
/// SQL cannot write them (SQLite's JSON functions escape other bytes and
/// are refused in an untrusted schema), so Swift writes them here, with
/// the same encoder as every write. Until a row is filled a page still
/// reads it whole, so nothing depends on this finishing; it only makes old
/// rows as cheap to page as new ones.
///
/// Cost: the partial index `messages_without_json_tail` holds exactly the
/// rows left, so a filled file costs one empty index probe per open. A
/// fill commits every `batchSize` rows: a crash part-way keeps what was
/// committed and the next open goes on from there.
enum SQLiteStoredJSONFill {
    static let batchSize = 1_000

    /// Fills the rows that have no tail and can have one; returns how many.
    @discardableResult
    static func run(_ connection: SQLiteConnection) throws(StoreError) -> Int {
        var filled = 0
        // The rows whose times no RFC 3339 year holds stay NULL: the walk
        // goes on past them by place, so they are visited once per open.
        var after = Int64.min
        while true {
            let rows = try sqlite { () throws(SQLiteError) in
                try connection.cachedStatement(sql: """
                    SELECT \(withConversationID) FROM messages AS m INDEXED BY messages_without_json_tail
                    JOIN conversations AS c ON c.seq = m.conversation_seq
                    WHERE m.json_tail IS NULL AND m.place > ? ORDER BY m.place LIMIT \(batchSize)
                    """).rows(after) { row in (place: row.int64(0), tail: expectedTail(row)) }
            }
            guard let last = rows.last else { return filled }
            after = last.place
            try connection.transaction(.immediate, mapError: StoreError.init) { () throws(StoreError) in
                for row in rows {
                    guard let tail = row.tail else { continue }
                    try sqlite { () throws(SQLiteError) in
                        try connection.cachedStatement(sql: "UPDATE messages SET json_tail = ? WHERE place = ?")
                            .execute(tail, row.place)
                    }
                    filled += 1
                }
            }
        }
    }

    /// The places of up to `limit` rows whose stored JSON differs from what
    /// their columns encode to (a missing one where one can be encoded
    /// included): every row is read, for `checkIntegrity` only.
    static func differingRows(_ connection: SQLiteConnection, limit: Int) throws(SQLiteError) -> [Int64] {
        var places: [Int64] = []
        try connection.makeStatement(sql: """
            SELECT \(withConversationID), m.json_tail FROM messages AS m
            JOIN conversations AS c ON c.seq = m.conversation_seq ORDER BY m.place
            """).run([]) { row throws(SQLiteError) -> Bool in
                if expectedTail(row) != row.optionalString(10) {
                    places.append(row.int64(0))
                }
                return places.count >= limit
            }
        return places
    }

    /// `StoredRows.messageColumns` of `messages AS m`, then (column 9) the
    /// public id of its conversation (`c`), which `Message` carries.
    private static let withConversationID =
        StoredRows.messageColumns.split(separator: ", ").map { "m.\($0)" }.joined(separator: ", ") + ", c.id"

    /// The tail a row of `withConversationID` should store; nil when it can
    /// have none, or when its conversation's stored id is not a valid one
    /// (only validated ids are inserted).
    private static func expectedTail(_ row: SQLiteRow) -> String? {
        guard let conversation = ConversationID(row.string(9)) else { return nil }
        return MessageJSONTail.encode(StoredRows.message(row, in: conversation))
    }
}
