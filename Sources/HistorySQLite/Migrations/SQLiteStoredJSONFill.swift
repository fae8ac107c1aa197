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
                    SELECT \(StoredRows.messageColumns) FROM messages INDEXED BY messages_without_json_tail
                    WHERE json_tail IS NULL AND place > ? ORDER BY place LIMIT \(batchSize)
                    """).rows(after) { row in (place: row.int64(0), tail: MessageJSONTail.encode(StoredRows.tailFields(row))) }
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
        try connection.makeStatement(sql: "SELECT \(StoredRows.messageColumns), json_tail FROM messages ORDER BY place")
            .run([]) { row throws(SQLiteError) -> Bool in
                if MessageJSONTail.encode(StoredRows.tailFields(row)) != row.optionalString(9) {
                    places.append(row.int64(0))
                }
                return places.count >= limit
            }
        return places
    }
}
