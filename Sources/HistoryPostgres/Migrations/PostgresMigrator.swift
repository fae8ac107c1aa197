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
/// let applied = try PostgresMigrator(migrations: PostgresMigration.bundled()).migrate(connection)
/// ```
///
/// Related PostgreSQL documentation:
/// <https://www.postgresql.org/docs/current/explicit-locking.html#ADVISORY-LOCKS>
public struct PostgresMigrator: Sendable {
    public let migrations: [PostgresMigration]

    /// The advisory lock's key: "chathist" in ASCII, so the lock is easy to
    /// trace back here from `pg_locks`, which shows it as its two halves
    /// (classid 1667785076, objid 1751741300).
    public static let lockKey: Int64 = 0x6368_6174_6869_7374

    /// Validates the list: versions must be exactly 1, 2, ..., n.
    public init(migrations: [PostgresMigration]) throws(PostgresMigrationError) {
        let sorted = migrations.sorted { $0.version < $1.version }
        for (offset, migration) in sorted.enumerated() where migration.version != offset + 1 {
            if offset > 0, sorted[offset - 1].version == migration.version {
                throw .refused(reason: "two migration files have version \(migration.version)")
            }
            throw .refused(reason: "migration versions must be 1, 2, 3, ... without gaps; "
                + "expected \(offset + 1), found \(migration.label)")
        }
        self.migrations = sorted
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
        var appliedNow: [Int] = []
        for migration in migrations where migration.version > applied {
            try apply(migration, to: connection)
            appliedNow.append(migration.version)
        }
        return appliedNow
    }

    /// Creates the bookkeeping table and checks what the database recorded;
    /// returns the highest applied version (0 for a new database).
    private func checkApplied(_ connection: PGConnection) throws(PostgresMigrationError) -> Int {
        let recorded = try database { () throws(PostgresError) in
            try connection.execute(sql: Self.createTableSQL)
            let result = try connection.query("SELECT version, name, checksum FROM schema_migrations ORDER BY version")
            return (0..<result.rowCount).map { row in
                (version: Int(result.int64(row, 0)), name: result.string(row, 1), checksum: result.string(row, 2))
            }
        }
        let known = migrations.last?.version ?? 0
        if let newest = recorded.last, newest.version > known {
            throw .refused(reason: "the database has schema version \(newest.version) (\(Self.quoted(newest.name))), "
                + "newer than this build knows (\(known)); refusing to open it with older code")
        }
        for (offset, record) in recorded.enumerated() {
            guard record.version == offset + 1 else {
                throw .refused(reason: "the database's applied migrations have a hole before "
                    + "version \(record.version); refusing to guess what happened")
            }
            let migration = migrations[offset]
            guard migration.checksum == record.checksum else {
                throw .refused(reason: "migration \(migration.label) changed after it was applied "
                    + "(recorded checksum \(Self.quoted(record.checksum)), file has \(migration.checksum)); "
                    + "shipped migrations must never be edited: add a new one instead")
            }
        }
        return recorded.count
    }

    private func apply(_ migration: PostgresMigration, to connection: PGConnection) throws(PostgresMigrationError) {
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

    /// A name or checksum read from the database, quoted with every control
    /// character escaped, so it cannot bend a log line.
    private static func quoted(_ text: String) -> String {
        String(reflecting: String(text.prefix(64)))
    }
}
