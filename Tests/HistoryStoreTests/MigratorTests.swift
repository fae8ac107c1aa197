import Foundation
import HistoryTestSupport
import Testing
@testable import HistoryStore
@testable import HistorySQLite

@Suite("Migrations")
struct MigratorTests {
    private func bundled() throws -> [Migration] {
        try Migration.bundled()
    }

    private func open(_ path: String, _ migrations: [Migration]) throws -> SQLiteHistoryStore {
        try SQLiteHistoryStore(configuration: SQLiteStoreConfiguration(path: path, durability: .normal), migrations: migrations)
    }

    @Test func bundledMigrationsAreParsedFromTheFiles() throws {
        let migrations = try bundled()
        #expect(migrations.first?.version == 1)
        #expect(migrations.first?.name == "init")
        #expect(migrations.first?.sql.contains("CREATE TABLE messages") == true)
        #expect(migrations.map(\.version) == Array(1...migrations.count))
    }

    @Test func fileNamesAreParsed() throws {
        let migration = try Migration(fileName: "0012_add_reactions.sql", sql: "SELECT 1;")
        #expect(migration.version == 12)
        #expect(migration.name == "add_reactions")
        #expect(migration.label == "0012_add_reactions")
        for bad in ["init.sql", "0001init.sql", "0001_.sql", "0000_zero.sql", "0001_init.txt", "x001_init.sql"] {
            #expect(throws: MigrationRefusal.self, "\(bad)") { try Migration(fileName: bad, sql: "") }
        }
    }

    @Test func checksumIsStableAndDependsOnEveryByte() {
        let a = Migration(version: 1, name: "a", sql: "CREATE TABLE t (x);")
        let b = Migration(version: 1, name: "a", sql: "CREATE TABLE t (x); ")
        #expect(a.checksum == Migration(version: 1, name: "other", sql: a.sql).checksum)
        #expect(a.checksum != b.checksum)
        #expect(a.checksum.count == 16)
        // FNV-1a 64 of the empty input is its offset basis.
        #expect(Migration(version: 1, name: "e", sql: "").checksum == "cbf29ce484222325")
    }

    @Test func listsWithGapsOrDuplicatesAreRefused() {
        let one = Migration(version: 1, name: "a", sql: "")
        let two = Migration(version: 2, name: "b", sql: "")
        let three = Migration(version: 3, name: "c", sql: "")
        #expect(throws: StoreError.self) { try SQLiteMigrator(migrations: [one, three]) }
        #expect(throws: StoreError.self) { try SQLiteMigrator(migrations: [one, one, two]) }
        #expect(throws: StoreError.self) { try SQLiteMigrator(migrations: [two, three]) }
        #expect(throws: Never.self) { try SQLiteMigrator(migrations: [three, one, two]) }
    }

    @Test func aNewDatabaseGetsEveryMigrationOnceAndReopeningAppliesNothing() async throws {
        try withTemporaryDirectory { directory in
            let path = directory.databasePath
            let migrations = try bundled()
            try open(path, migrations).close()
            #expect(try queryStrings(path, "SELECT version || ':' || name FROM schema_migrations")
                == ["1:init", "2:messages_by_place", "3:members", "4:tombstones_forget_fingerprints", "5:inbox",
                   "6:change_log", "7:members_version", "8:message_json_tail", "9:no_index_by_time", "10:time_marks"])
            let tables = try queryStrings(path, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
            #expect(tables == ["activity_counter", "change_log", "conversations", "members", "messages", "removed_members",
                               "schema_migrations"])

            let connection = try SQLiteConnection(path: path)
            defer { connection.close() }
            #expect(try SQLiteMigrator(migrations: migrations).migrate(connection) == [])
            try open(path, migrations).close()
            #expect(try queryStrings(path, "SELECT count(*) FROM schema_migrations") == ["\(migrations.count)"])
        }
    }

    @Test func aNewDatabaseUsesWALAnd8KiBPages() async throws {
        try withTemporaryDirectory { directory in
            let path = directory.databasePath
            try open(path, try bundled()).close()
            #expect(try queryStrings(path, "PRAGMA journal_mode") == ["wal"])
            #expect(try queryStrings(path, "PRAGMA page_size") == ["8192"])
        }
    }

    @Test func laterMigrationsAreAppliedInOrderOnReopen() async throws {
        try withTemporaryDirectory { directory in
            let path = directory.databasePath
            var migrations = try bundled()
            try open(path, migrations).close()
            let next = migrations.count + 1
            migrations.append(Migration(version: next, name: "extra", sql: "CREATE TABLE extra (x INTEGER);"))
            migrations.append(Migration(version: next + 1, name: "more", sql: "ALTER TABLE extra ADD COLUMN y TEXT;"))
            let connection = try SQLiteConnection(path: path)
            defer { connection.close() }
            #expect(try SQLiteMigrator(migrations: migrations).migrate(connection) == [next, next + 1])
            #expect(try queryStrings(path, "SELECT name FROM schema_migrations ORDER BY version").suffix(2) == ["extra", "more"])
        }
    }

    @Test func aChangedMigrationIsRefused() async throws {
        try withTemporaryDirectory { directory in
            let path = directory.databasePath
            let migrations = try bundled()
            try open(path, migrations).close()
            var tampered = migrations
            tampered[0] = Migration(version: 1, name: "init", sql: migrations[0].sql + "\n-- edited after shipping\n")
            do {
                _ = try open(path, tampered)
                Issue.record("a tampered migration was accepted")
            } catch {
                guard case .migration(let reason)? = error as? StoreError else { Issue.record("wrong error \(error)"); return }
                #expect(reason.contains("0001_init changed"))
            }
        }
    }

    @Test func aNewerDatabaseIsRefused() async throws {
        try withTemporaryDirectory { directory in
            let path = directory.databasePath
            try open(path, try bundled()).close()
            let connection = try SQLiteConnection(path: path)
            try connection.execute(sql: "INSERT INTO schema_migrations VALUES (99, 'future', 'x', 0)")
            connection.close()
            do {
                _ = try open(path, try bundled())
                Issue.record("a newer schema was accepted")
            } catch {
                guard case .migration(let reason)? = error as? StoreError else { Issue.record("wrong error \(error)"); return }
                #expect(reason.contains("99"))
                #expect(reason.contains("newer"))
            }
        }
    }

    @Test func aFailingMigrationLeavesNothingHalfApplied() async throws {
        try withTemporaryDirectory { directory in
            let path = directory.databasePath
            var migrations = try bundled()
            migrations.append(Migration(version: migrations.count + 1, name: "broken", sql: """
                CREATE TABLE half (x INTEGER);
                INSERT INTO no_such_table VALUES (1);
                """))
            do {
                _ = try open(path, migrations)
                Issue.record("a broken migration was accepted")
            } catch {
                guard case .migration(let reason)? = error as? StoreError else { Issue.record("wrong error \(error)"); return }
                #expect(reason.contains("broken"))
            }
            // The earlier migration is applied and recorded, the broken one not at all.
            #expect(try queryStrings(path, "SELECT version FROM schema_migrations") == (1..<migrations.count).map(String.init))
            #expect(try queryStrings(path, "SELECT count(*) FROM sqlite_master WHERE name = 'half'") == ["0"])
            // And the database still opens with the good list.
            try open(path, try bundled()).close()
        }
    }
}
