import HistoryStore
import CSQLite

/// Owns one SQLite connection, `sqlite3*`: opening, pragmas, statements,
/// transactions and closing.
///
/// Opened with `SQLITE_OPEN_NOMUTEX` because a connection is only ever used
/// by one thread at a time: the writer's serial queue, or the thread that has
/// checked a reader out of the `SQLiteReaderPool`. SQLite's own per-call mutex
/// would be pure overhead. For that reason the type is not `Sendable`; the
/// owners that hand it between threads carry the proof.
///
/// ```swift
/// let connection = try SQLiteConnection(path: "/tmp/h.sqlite")
/// try connection.execute(sql: "PRAGMA foreign_keys = ON")
/// ```
///
/// Related SQLite documentation: <https://www.sqlite.org/c3ref/open.html>
final class SQLiteConnection {
    let path: String
    private let handle: OpaquePointer
    private var cache = SQLiteStatementCache()
    private(set) var isOpen = true

    /// Opens (creating when missing) the database at `path`, through the
    /// VFS named `vfs` (nil: SQLite's default).
    ///
    /// Every connection is hardened for a file that may be hostile (see
    /// `csqlite_harden`): defensive mode, an untrusted schema, and triggers
    /// off. The store's schema has no trigger; a migration that adds one
    /// must turn them back on, or it will never fire.
    init(path: String, vfs: String? = nil) throws(SQLiteError) {
        SQLiteLibrary.prepare()
        var database: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let code = sqlite3_open_v2(path, &database, flags, vfs)
        guard code == SQLITE_OK, let database else {
            let message = database.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open \(path)"
            // "Whether or not an error occurs when it is opened, resources
            // associated with the database connection handle should be
            // released by passing it to sqlite3_close() when it is no longer
            // required." (https://www.sqlite.org/c3ref/open.html)
            _ = sqlite3_close(database) // ignore result code
            throw SQLiteError(code: code, message: message, sql: nil)
        }
        sqlite3_extended_result_codes(database, 1)
        // Before the first statement, which is when SQLite reads the schema.
        let hardening = csqlite_harden(database)
        guard hardening == SQLITE_OK else {
            let message = String(cString: sqlite3_errmsg(database))
            _ = sqlite3_close(database) // ignore result code
            throw SQLiteError(code: hardening, message: "cannot harden the connection to \(path): \(message)", sql: nil)
        }
        self.path = path
        self.handle = database
    }

    deinit {
        close()
    }

    // MARK: - Statements

    /// A prepared statement kept for the life of the connection.
    func cachedStatement(sql: String) throws(SQLiteError) -> SQLiteStatement {
        try cache.statement(sql: sql, database: handle)
    }

    /// A statement prepared for one use (finalized when released).
    func makeStatement(sql: String) throws(SQLiteError) -> SQLiteStatement {
        try SQLiteStatement(database: handle, sql: sql, persistent: false)
    }

    /// Runs one or more statements without results (schema, pragmas).
    func execute(sql: String) throws(SQLiteError) {
        var message: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, sql, nil, nil, &message)
        guard code == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? lastErrorMessage
            sqlite3_free(message)
            throw SQLiteError(code: sqlite3_extended_errcode(handle), message: text, sql: sql)
        }
    }

    /// The first column of the first row as text (pragma answers).
    func scalarText(sql: String) throws(SQLiteError) -> String? {
        try makeStatement(sql: sql).firstRow { $0.optionalString(0) } ?? nil
    }

    /// The first column of the first row as an integer.
    func scalarInt64(sql: String) throws(SQLiteError) -> Int64? {
        try makeStatement(sql: sql).firstRow { $0.optionalInt64(0) } ?? nil
    }

    /// Sets how long a locked database is retried before SQLITE_BUSY.
    func setBusyTimeout(milliseconds: Int32) throws(SQLiteError) {
        let code = sqlite3_busy_timeout(handle, milliseconds)
        guard code == SQLITE_OK else { throw SQLiteError(code: code, message: lastErrorMessage) }
    }

    /// The main database's open file, as its VFS made it (for checks of
    /// which VFS serves the connection).
    var mainFile: UnsafeMutablePointer<sqlite3_file>? {
        var file: UnsafeMutablePointer<sqlite3_file>?
        guard sqlite3_file_control(handle, "main", SQLITE_FCNTL_FILE_POINTER, &file) == SQLITE_OK else { return nil }
        return file
    }

    /// One on/off setting of `sqlite3_db_config` (`SQLITE_DBCONFIG_*`):
    /// 1 or 0, or -1 when SQLite refused to answer.
    func configurationFlag(_ option: Int32) -> Int32 {
        csqlite_config_flag(handle, option)
    }

    var lastErrorMessage: String {
        String(cString: sqlite3_errmsg(handle))
    }

    /// False while a transaction is open.
    var isAutocommit: Bool {
        sqlite3_get_autocommit(handle) != 0
    }

    /// Rows inserted, updated or deleted through this connection since it
    /// opened: how a test checks that a write's cost does not grow.
    var totalChanges: Int64 {
        sqlite3_total_changes64(handle)
    }

    // MARK: - Transactions

    enum TransactionKind: String {
        /// Takes the read snapshot at the first read: for readers.
        case deferred = "BEGIN DEFERRED"
        /// Takes the write lock at once, so a writer never fails half-way
        /// with SQLITE_BUSY on lock upgrade.
        case immediate = "BEGIN IMMEDIATE"
    }

    /// Runs `body` inside a transaction: committed when it returns, rolled
    /// back when it throws or when COMMIT fails. `mapError` turns the
    /// BEGIN/COMMIT failures into the body's error type.
    ///
    /// Related SQLite documentation: <https://www.sqlite.org/lang_transaction.html>
    func transaction<T, E: Error>(_ kind: TransactionKind,
                                  mapError: (SQLiteError) -> E,
                                  _ body: () throws(E) -> T) throws(E) -> T {
        do {
            try cachedStatement(sql: kind.rawValue).execute()
        } catch {
            throw mapError(error)
        }
        let value: T
        do {
            value = try body()
        } catch {
            rollback()
            throw error
        }
        do {
            try cachedStatement(sql: "COMMIT").execute()
        } catch {
            // "If certain kinds of errors occur within a transaction, the
            // transaction may or may not be rolled back automatically"
            // (lang_transaction.html): end it ourselves when it is still open.
            rollback()
            throw mapError(error)
        }
        return value
    }

    /// Ends an open transaction, ignoring errors: it is only called on a
    /// path that already reports one.
    func rollback() {
        guard !isAutocommit else { return }
        _ = try? cachedStatement(sql: "ROLLBACK").execute()
    }

    // MARK: - Closing

    /// Finalizes every cached statement, then closes. Idempotent.
    func close() {
        guard isOpen else { return }
        isOpen = false
        // Finalize all cached statements since they would prevent the
        // connection from closing; close_v2 then also copes with a statement
        // still held elsewhere by deferring the close until it is finalized.
        cache.removeAll()
        _ = sqlite3_close_v2(handle)
    }
}
