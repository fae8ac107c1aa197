import HistoryStore
/// Brings a PostgreSQL database's schema up to the code's: applies the
/// missing migrations in order, each in its own transaction together with
/// its `schema_migrations` record, so a migration is either applied and
/// recorded or neither.
///
/// Several instances may start at once on one database: the whole check
/// and apply runs under a session-level advisory lock
/// (`pg_advisory_lock(lockKey)`), so the first instance applies what is
/// missing while the others wait, then find it recorded and apply nothing.
/// The lock belongs to the session, so one that dies mid-migration releases
/// it and rolls its transaction back. The migrator therefore needs a real
/// session: behind a pooler in transaction mode (PgBouncer's
/// `pool_mode = transaction`), point it at the database directly.
///
/// It refuses, with `.refused` and before applying anything: a migration
/// list with gaps or duplicate versions; a database that records a version
/// this code does not know (written by newer code); a database whose
/// applied versions are not 1...k (a hole); and a database that recorded a
/// different checksum for a migration (the file changed after it shipped).
///
/// ```swift
/// let applied = try PostgresMigrator(migrations: PostgresSchema.migrations()).migrate(connection)
/// ```
///
/// Related PostgreSQL documentation:
/// <https://www.postgresql.org/docs/current/explicit-locking.html#ADVISORY-LOCKS>
public struct PostgresMigrator: Sendable {
    public let migrations: [Migration]

    /// The advisory lock's key: "chathist" in ASCII, so the lock is easy to
    /// trace back here from `pg_locks`, which shows it as its two halves
    /// (classid 1667785076, objid 1751741300).
    public static let lockKey: Int64 = 0x6368_6174_6869_7374

    /// Validates the list: versions must be exactly 1, 2, ..., n (`MigrationPlan`).
    public init(migrations: [Migration]) throws(PostgresMigrationError) {
        self.migrations = try MigrationPlan.ordered(migrations) { reason -> PostgresMigrationError in .refused(reason: reason) }
    }

    static let createTableSQL = """
        CREATE TABLE IF NOT EXISTS schema_migrations (
            version    integer     PRIMARY KEY,
            name       text        NOT NULL,
            checksum   text        NOT NULL,
            applied_at timestamptz NOT NULL DEFAULT now()
        )
        """

    /// Applies what is missing, waiting first for any other instance that
    /// is migrating the same database; returns the versions applied now
    /// (empty when the schema was already current).
    @discardableResult
    public func migrate(_ connection: PGConnection) throws(PostgresMigrationError) -> [Int] {
        _ = try database { () throws(PostgresError) in
            try connection.query("SELECT pg_advisory_lock($1)", [.int64(Self.lockKey)])
        }
        // A lost connection has released the lock with its session.
        defer { _ = try? connection.query("SELECT pg_advisory_unlock($1)", [.int64(Self.lockKey)]) }

        let applied = try checkApplied(connection)
        return try MigrationPlan.applyMissing(migrations, after: applied) { migration throws(PostgresMigrationError) in
            try apply(migration, to: connection)
        }
    }

    /// Creates the bookkeeping table and checks what the database recorded;
    /// returns the highest applied version (0 for a new database).
    private func checkApplied(_ connection: PGConnection) throws(PostgresMigrationError) -> Int {
        let recorded = try database { () throws(PostgresError) in
            try connection.execute(sql: Self.createTableSQL)
            let result = try connection.query("SELECT version, name, checksum FROM schema_migrations ORDER BY version")
            return (0..<result.rowCount).map { row in
                AppliedMigration(version: Int(result.int64(row, 0)), name: result.string(row, 1), checksum: result.string(row, 2))
            }
        }
        do {
            return try MigrationPlan.appliedCount(recorded: recorded, known: migrations)
        } catch {
            throw .refused(reason: error.reason)
        }
    }

    private func apply(_ migration: Migration, to connection: PGConnection) throws(PostgresMigrationError) {
        do throws(PostgresError) {
            try connection.transaction { () throws(PostgresError) in
                try connection.execute(sql: migration.sql)
                try connection.query("INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)",
                                     [.int32(Int32(migration.version)), .text(migration.name), .text(migration.checksum)])
            }
        } catch where error.kind == .connectionLost || error.kind == .connectionFailed {
            // Whether the COMMIT happened is unknown: the next start reads
            // schema_migrations again and knows.
            throw .database(error)
        } catch {
            throw .failed(migration: migration.label, error)
        }
    }

    private func database<T>(_ body: () throws(PostgresError) -> T) throws(PostgresMigrationError) -> T {
        do {
            return try body()
        } catch {
            throw .database(error)
        }
    }
}
