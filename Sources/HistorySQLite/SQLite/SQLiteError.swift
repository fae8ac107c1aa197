import HistoryStore
import CSQLite

/// A failed SQLite call: its extended result code, SQLite's message, and the
/// SQL that was running, so a log line says what broke without a debugger.
///
/// It never crosses the store's public boundary: `StoreError(_:)` turns it
/// into `.storage` there, so callers switch on store errors
/// only. Codes can be matched by their primary value:
///
/// ```swift
/// do { try statement.execute() }
/// catch let error where error.primaryCode == SQLITE_CONSTRAINT { ... }
/// ```
///
/// Related SQLite documentation: <https://www.sqlite.org/rescode.html>
struct SQLiteError: Error, CustomStringConvertible {
    /// The extended result code (`sqlite3_extended_result_codes` is on).
    let code: Int32
    let message: String
    let sql: String?

    init(code: Int32, message: String, sql: String? = nil) {
        self.code = code
        self.message = message
        self.sql = sql
    }

    /// The primary result code: the low byte of the extended one.
    var primaryCode: Int32 { code & 0xFF }

    var description: String {
        if let sql { return "SQLite error \(code): \(message) (in `\(sql)`)" }
        return "SQLite error \(code): \(message)"
    }
}

extension StoreError {
    /// The one conversion from SQLite's errors to the store's.
    init(_ error: SQLiteError) {
        self = .storage(sqlite: error.code, message: error.message)
    }

    /// A failure of SQLite with its extended result `code`.
    static func storage(sqlite code: Int32, message: String) -> StoreError {
        .storage(StorageFailure(database: "SQLite", code: String(code), message: message,
                                isFull: code & 0xFF == SQLITE_FULL))
    }

    /// A value no operation of this store can write (see the core's form):
    /// reported as SQLite reports a damaged file, `SQLITE_CORRUPT`.
    static func impossibleStoredValue(_ message: String) -> StoreError {
        .impossibleStoredValue(message, database: "SQLite", code: String(SQLITE_CORRUPT))
    }
}

/// Runs SQLite calls and reports their failure as a `StoreError`, so code
/// that mixes store rules with SQL has one error type.
@inline(__always)
func sqlite<T>(_ body: () throws(SQLiteError) -> T) throws(StoreError) -> T {
    do {
        return try body()
    } catch {
        throw StoreError(error)
    }
}
