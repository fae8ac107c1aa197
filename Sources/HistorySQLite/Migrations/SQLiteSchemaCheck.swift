import HistoryStore
/// Refuses a database whose schema is not exactly what the migrations it
/// records create: no extra trigger, view, table or index, none missing, and
/// every one defined by the same SQL.
///
/// Why: a database file may be swapped or edited by someone else. The
/// migrations' checksums prove which migrations ran, not that nothing was
/// added after them; a trigger added to `messages` would run inside the
/// writer's transactions, and a redefined generated column would hand the
/// code ids outside the layout. Connections are hardened too (triggers off,
/// an untrusted schema, defensive mode: see `SQLiteConnection`), but a file that
/// is not ours is better refused, with its first difference named, than
/// served.
///
/// How: the expected schema is the one the same migrations produce in an
/// empty in-memory database, built at each open, compared entry by entry
/// with the file's `sqlite_schema`: 3 ms measured (debug build) on a file of
/// 100,000 messages, and the same whatever the file's size. `PRAGMA quick_check`, which also reads every page, was
/// measured and left out: 0.8 s for 100,000 messages (20 MB) and 6.6 s for
/// 1,000,000 (200 MB), growing with the file, on every start.
/// `SQLiteHistoryStore.checkIntegrity()` runs the full check on demand.
struct SQLiteSchemaCheck {
    /// One row of `sqlite_schema`.
    struct Entry: Hashable, Comparable {
        let type: String
        let name: String
        let table: String
        /// Nil for the indexes SQLite makes for UNIQUE and PRIMARY KEY.
        let sql: String?

        static func < (lhs: Entry, rhs: Entry) -> Bool {
            (lhs.type, lhs.name) < (rhs.type, rhs.name)
        }

        /// `trigger 'x' on 'messages'`, for messages (the names come from
        /// the file, so they are quoted as untrusted text).
        var label: String {
            let type = UntrustedText.quoted(type), name = UntrustedText.quoted(name)
            return self.name == table ? "\(type) '\(name)'" : "\(type) '\(name)' on '\(UntrustedText.quoted(table))'"
        }
    }

    /// The migrations the database records as applied.
    let applied: ArraySlice<Migration>

    /// Throws `.migration` naming the first difference between the file's
    /// schema and the one `applied` creates.
    func verify(_ connection: SQLiteConnection) throws(StoreError) {
        let found = try Self.entries(of: connection)
        let expected = try expectedEntries()
        guard found != expected else { return }
        let expectedByName = Dictionary(expected.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let foundByName = Dictionary(found.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let version = applied.last?.label ?? "none"
        for entry in found.sorted() {
            guard let twin = expectedByName[entry.name], twin.type == entry.type, twin.table == entry.table else {
                throw .migration(reason: "the database has a \(entry.label) that no migration creates "
                    + "(migrations applied up to \(version)); refusing a file that may have been altered")
            }
            guard twin.sql == entry.sql else {
                throw .migration(reason: "the database's \(entry.label) is not defined as the migrations "
                    + "define it (migrations applied up to \(version)); refusing a file that may have been altered")
            }
        }
        for entry in expected.sorted() where foundByName[entry.name] == nil {
            throw .migration(reason: "the database lacks the \(entry.label) that the migrations create "
                + "(migrations applied up to \(version)); refusing a file that may have been altered")
        }
        // The same names, types and SQL, yet unequal: a duplicate row in
        // sqlite_schema, which only a damaged file can hold.
        throw .migration(reason: "the database's schema table holds duplicate entries; refusing a damaged file")
    }

    /// What `applied` creates in an empty database.
    private func expectedEntries() throws(StoreError) -> [Entry] {
        let reference = try sqlite { () throws(SQLiteError) in try SQLiteConnection(path: ":memory:") }
        defer { reference.close() }
        try SQLiteMigrator(migrations: Array(applied)).migrate(reference, checkingSchema: false)
        return try Self.entries(of: reference)
    }

    static func entries(of connection: SQLiteConnection) throws(StoreError) -> [Entry] {
        try sqlite { () throws(SQLiteError) in
            try connection.makeStatement(sql: "SELECT type, name, tbl_name, sql FROM main.sqlite_schema ORDER BY type, name")
                .rows { row in
                    Entry(type: row.string(0), name: row.string(1), table: row.string(2), sql: row.optionalString(3))
                }
        }
    }
}
