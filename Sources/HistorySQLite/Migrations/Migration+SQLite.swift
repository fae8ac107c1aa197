import HistoryStore

extension Migration {
    /// SQLite's series, embedded at build time from the top-level
    /// `migrations/` folder (see the EmbedMigrations plugin).
    static func bundled() throws(StoreError) -> [Migration] {
        do {
            return try Migration.parse(embeddedMigrationFiles.map { ($0.name, $0.sql) })
        } catch {
            throw .migration(reason: error.reason)
        }
    }
}
