import HistoryStore

/// PostgreSQL's series of migrations, embedded at build time from
/// `migrations/postgres/` (see the EmbedMigrations plugin).
public enum PostgresSchema {
    public static func migrations() throws(PostgresMigrationError) -> [Migration] {
        do {
            return try Migration.parse(embeddedMigrationFiles.map { ($0.name, $0.sql) })
        } catch {
            throw .refused(reason: error.reason)
        }
    }
}
