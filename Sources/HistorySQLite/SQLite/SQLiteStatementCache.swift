import HistoryStore
import CSQLite

/// The prepared statements of one connection, keyed by their SQL text.
///
/// Preparing costs far more than stepping a short keyset read, so every
/// statement the store runs repeatedly is prepared once per connection.
/// `SQLiteConnection.close()` empties the cache first: an unfinalized statement
/// would keep the connection from closing.
struct SQLiteStatementCache {
    private var statements: [String: SQLiteStatement] = [:]

    mutating func statement(sql: String, database: OpaquePointer) throws(SQLiteError) -> SQLiteStatement {
        if let statement = statements[sql] { return statement }
        let statement = try SQLiteStatement(database: database, sql: sql, persistent: true)
        statements[sql] = statement
        return statement
    }

    /// Drops every statement; each finalizes in its `deinit`.
    mutating func removeAll() {
        statements.removeAll()
    }
}
