import HistoryStore
import Foundation

/// Brings a database's schema up to the code's: applies the missing
/// migrations in order, each in its own `BEGIN IMMEDIATE` transaction
/// together with its `schema_migrations` record, so a migration is either
/// applied and recorded or neither.
///
/// It refuses, with `StoreError.migration` and before applying anything:
/// a migration list with gaps or duplicate versions; a database that records
/// a version this code does not know (it was written by newer code); a
/// database whose applied versions are not 1...k (a hole); and a database
/// that recorded a different checksum for a migration (the file changed after
/// it shipped); and a database whose schema holds anything else than what
/// its recorded migrations create (`SQLiteSchemaCheck`).
///
/// ```swift
/// let applied = try SQLiteMigrator(migrations: Migration.bundled()).migrate(connection)
/// ```
struct SQLiteMigrator {
    let migrations: [Migration]

    /// Validates the list: versions must be exactly 1, 2, ..., n (`MigrationPlan`).
    init(migrations: [Migration]) throws(StoreError) {
        self.migrations = try MigrationPlan.ordered(migrations) { reason -> StoreError in .migration(reason: reason) }
    }

    static let createTableSQL = """
        CREATE TABLE IF NOT EXISTS schema_migrations (
            version    INTEGER PRIMARY KEY,
            name       TEXT    NOT NULL,
            checksum   TEXT    NOT NULL,
            applied_at INTEGER NOT NULL
        )
        """

    /// Applies what is missing; returns the versions applied now (empty when
    /// the schema was already current). Before applying anything, the
    /// file's schema must be exactly what its recorded migrations create
    /// (`SQLiteSchemaCheck`); `checkingSchema` is false only for the empty
    /// in-memory database that check builds as its reference.
    @discardableResult
    func migrate(_ connection: SQLiteConnection, checkingSchema: Bool = true) throws(StoreError) -> [Int] {
        let applied = try checkApplied(connection)
        if checkingSchema {
            try SQLiteSchemaCheck(applied: migrations.prefix(applied)).verify(connection)
        }
        return try MigrationPlan.applyMissing(migrations, after: applied) { migration throws(StoreError) in
            try apply(migration, to: connection)
        }
    }

    /// Creates the bookkeeping table and checks what the database recorded;
    /// returns the highest applied version (0 for a new database).
    private func checkApplied(_ connection: SQLiteConnection) throws(StoreError) -> Int {
        try connection.transaction(.immediate, mapError: StoreError.init) { () throws(StoreError) -> Int in
            try sqlite { () throws(SQLiteError) in try connection.execute(sql: Self.createTableSQL) }
            let recorded = try sqlite { () throws(SQLiteError) in
                try connection.makeStatement(sql: "SELECT version, name, checksum FROM schema_migrations ORDER BY version")
                    .rows { row in AppliedMigration(version: Int(row.int64(0)), name: row.string(1), checksum: row.string(2)) }
            }
            do throws(MigrationRefusal) {
                return try MigrationPlan.appliedCount(recorded: recorded, known: migrations)
            } catch {
                throw .migration(reason: error.reason)
            }
        }
    }

    private func apply(_ migration: Migration, to connection: SQLiteConnection) throws(StoreError) {
        let mapError = { (error: SQLiteError) in
            StoreError.migration(reason: "migration \(migration.label) failed and was rolled back: \(error.message)")
        }
        try connection.transaction(.immediate, mapError: mapError) { () throws(StoreError) in
            do throws(SQLiteError) {
                try connection.execute(sql: migration.sql)
                let appliedAt = Timestamp.now().millisecondsSinceEpoch
                try connection.makeStatement(sql: """
                    INSERT INTO schema_migrations (version, name, checksum, applied_at) VALUES (?, ?, ?, ?)
                    """).execute(migration.version, migration.name, migration.checksum, appliedAt)
            } catch {
                throw mapError(error)
            }
        }
    }
}
