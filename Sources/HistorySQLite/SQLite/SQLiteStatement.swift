import HistoryStore
import CSQLite

/// Owns one prepared statement, `sqlite3_stmt*`, and finalizes it in `deinit`.
///
/// Every use binds, steps and then resets and clears its bindings (in a
/// `defer`), so a cached statement never holds a read snapshot open or leaks
/// a previous call's values into the next. A class, not a struct, because the
/// handle must be finalized exactly once whatever path the caller takes.
///
/// ```swift
/// let statement = try connection.cachedStatement(sql: "SELECT body FROM messages WHERE id = ?")
/// let body = try statement.firstRow(42) { $0.string(0) }
/// ```
///
/// Related SQLite documentation: <https://www.sqlite.org/c3ref/stmt.html>
final class SQLiteStatement {
    let sql: String
    let handle: OpaquePointer
    private let database: OpaquePointer

    /// Prepares `sql`; `persistent` hints SQLite that the statement is cached
    /// and reused for a long time.
    init(database: OpaquePointer, sql: String, persistent: Bool) throws(SQLiteError) {
        var statement: OpaquePointer?
        let flags = persistent ? UInt32(SQLITE_PREPARE_PERSISTENT) : 0
        let code = sqlite3_prepare_v3(database, sql, -1, flags, &statement, nil)
        guard code == SQLITE_OK, let statement else {
            // On error *ppStmt is set to NULL; nothing to finalize.
            throw SQLiteError(code: code, message: String(cString: sqlite3_errmsg(database)), sql: sql)
        }
        self.sql = sql
        self.handle = statement
        self.database = database
    }

    deinit {
        sqlite3_finalize(handle)
    }

    // MARK: - Running

    /// Runs the statement to completion, ignoring rows.
    func execute(_ values: any SQLiteBindable...) throws(SQLiteError) {
        try run(values) { _ throws(SQLiteError) in }
    }

    /// Every row, mapped.
    func rows<T>(_ values: any SQLiteBindable..., map: (SQLiteRow) -> T) throws(SQLiteError) -> [T] {
        var result: [T] = []
        try run(values) { row throws(SQLiteError) in result.append(map(row)) }
        return result
    }

    /// The first row, mapped; nil when there is none. The statement is reset
    /// after the first row, so a `LIMIT 1` is not needed for correctness.
    func firstRow<T>(_ values: any SQLiteBindable..., map: (SQLiteRow) -> T) throws(SQLiteError) -> T? {
        defer { resetAndClear() }
        try bind(values)
        switch sqlite3_step(handle) {
        case SQLITE_ROW:
            return map(SQLiteRow(handle: handle))
        case SQLITE_DONE:
            return nil
        case let code:
            throw error(code)
        }
    }

    /// Binds `values` to ?1, ?2, ... and steps through every row.
    func run(_ values: [any SQLiteBindable], body: (SQLiteRow) throws(SQLiteError) -> Void) throws(SQLiteError) {
        defer { resetAndClear() }
        try bind(values)
        while true {
            switch sqlite3_step(handle) {
            case SQLITE_DONE:
                return
            case SQLITE_ROW:
                try body(SQLiteRow(handle: handle))
            case let code:
                throw error(code)
            }
        }
    }

    /// Like `run`, but stops at the first row for which `body` returns true.
    func run(_ values: [any SQLiteBindable], until body: (SQLiteRow) throws(SQLiteError) -> Bool) throws(SQLiteError) {
        defer { resetAndClear() }
        try bind(values)
        while true {
            switch sqlite3_step(handle) {
            case SQLITE_DONE:
                return
            case SQLITE_ROW:
                if try body(SQLiteRow(handle: handle)) { return }
            case let code:
                throw error(code)
            }
        }
    }

    // MARK: - Private

    private func bind(_ values: [any SQLiteBindable]) throws(SQLiteError) {
        for (offset, value) in values.enumerated() {
            let code = value.bind(to: handle, at: Int32(offset + 1))
            guard code == SQLITE_OK else { throw error(code) }
        }
    }

    private func resetAndClear() {
        // sqlite3_reset repeats the last step's error, which was already thrown.
        _ = sqlite3_reset(handle)
        _ = sqlite3_clear_bindings(handle)
    }

    private func error(_ code: Int32) -> SQLiteError {
        // Extended result codes are on for every connection, so `code` is
        // already the extended one.
        SQLiteError(code: code, message: String(cString: sqlite3_errmsg(database)), sql: sql)
    }
}

/// A statement is bound to its connection, which one thread uses at a time.
@available(*, unavailable)
extension SQLiteStatement: Sendable {}

/// The current row of a stepping statement; valid only inside the row callback.
struct SQLiteRow {
    let handle: OpaquePointer

    func int64(_ column: Int32) -> Int64 {
        sqlite3_column_int64(handle, column)
    }

    func optionalInt64(_ column: Int32) -> Int64? {
        sqlite3_column_type(handle, column) == SQLITE_NULL ? nil : sqlite3_column_int64(handle, column)
    }

    func bool(_ column: Int32) -> Bool {
        sqlite3_column_int64(handle, column) != 0
    }

    func string(_ column: Int32) -> String {
        // column_text before column_bytes, as the SQLite docs require, so the
        // count is of the UTF-8 form just produced.
        guard let text = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    func optionalString(_ column: Int32) -> String? {
        sqlite3_column_type(handle, column) == SQLITE_NULL ? nil : string(column)
    }

    /// A text column's UTF-8 bytes without building a String; valid only
    /// until the statement steps or resets (copy them before returning).
    func textBytes(_ column: Int32) -> UnsafeBufferPointer<UInt8> {
        guard let text = sqlite3_column_text(handle, column) else { return UnsafeBufferPointer(start: nil, count: 0) }
        return UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(handle, column)))
    }

    func optionalTextBytes(_ column: Int32) -> UnsafeBufferPointer<UInt8>? {
        sqlite3_column_type(handle, column) == SQLITE_NULL ? nil : textBytes(column)
    }
}
