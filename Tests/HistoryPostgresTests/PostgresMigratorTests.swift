import HistoryStore
import Dispatch
import HistoryPostgres
import HistoryTestSupport
import Synchronization
import Testing

extension PostgresTests {
    @Suite("PostgresMigrator")
    struct PostgresMigratorTests {
        private func strings(_ connection: PGConnection, _ sql: String) throws -> [String] {
            let result = try connection.query(sql, resultFormat: .text)
            return (0..<result.rowCount).map { result.string($0, 0) }
        }

        @Test func bundledMigrationsAreParsedFromTheFiles() throws {
            let migrations = try PostgresSchema.migrations()
            #expect(migrations.first?.label == "0001_init")
            #expect(migrations.first?.sql.contains("CREATE TABLE messages") == true)
            #expect(migrations.map(\.version) == Array(1...migrations.count))
            // The checksum is the SQLite store's: FNV-1a 64 (of nothing, its offset basis).
            #expect(Migration(version: 1, name: "e", sql: "").checksum == "cbf29ce484222325")
            for bad in ["init.sql", "0001init.sql", "0001_.sql", "0000_zero.sql", "0001_init.txt"] {
                #expect(throws: MigrationRefusal.self, "\(bad)") { try Migration(fileName: bad, sql: "") }
            }
        }

        @Test func aNewDatabaseGetsEveryMigrationOnceAndAgainNothing() async throws {
            try await withTestDatabase { uri in
                let connection = try PGConnection(uri: uri)
                let migrations = try PostgresSchema.migrations()
                let migrator = try PostgresMigrator(migrations: migrations)
                #expect(try migrator.migrate(connection) == Array(1...migrations.count))
                #expect(try migrator.migrate(connection) == [])
                #expect(try PostgresMigrator(migrations: migrations).migrate(PGConnection(uri: uri)) == [])
                #expect(try strings(connection, "SELECT version || ':' || name || ':' || checksum FROM schema_migrations ORDER BY version")
                    == migrations.map { "\($0.version):\($0.name):\($0.checksum)" })
                #expect(try strings(connection, "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1")
                    == ["activity_counter", "change_log", "conversations", "members", "messages", "removed_members",
                        "schema_migrations"])
                #expect(try strings(connection, "SELECT value FROM activity_counter") == ["0"])
                // The lock is released: another session can take it at once.
                #expect(try PGConnection(uri: uri).query("SELECT pg_try_advisory_lock($1)", [.int64(PostgresMigrator.lockKey)]).bool(0, 0))
            }
        }

        @Test func theSchemaKeepsItsPromises() async throws {
            try await withTestDatabase { uri in
                let connection = try PGConnection(uri: uri)
                try PostgresMigrator(migrations: PostgresSchema.migrations()).migrate(connection)
                let seq = try connection.query("INSERT INTO conversations (id, created_at) VALUES ('c1', 0) RETURNING seq").int64(0, 0)
                let insert = """
                    INSERT INTO messages (conversation_seq, id, sender, body, created_at, client_id, created_version, version)
                    VALUES ($1, nextval('message_ids'), 'ann', 'hi', 0, $2, $3, $3) RETURNING id
                    """
                let first = try connection.query(insert, [.int64(seq), .text("k1"), .int64(1)]).int64(0, 0)
                let second = try connection.query(insert, [.int64(seq), nil, .int64(2)]).int64(0, 0)
                #expect(second > first)
                // A client_id once per conversation; a version once per conversation.
                let reused = try #require(throws: PostgresError.self) {
                    try connection.query(insert, [.int64(seq), .text("k1"), .int64(3)])
                }
                #expect(reused.kind == .uniqueViolation)
                #expect(reused.constraint == "messages_by_client_id")
                let sameVersion = try #require(throws: PostgresError.self) {
                    try connection.query(insert, [.int64(seq), .text("k2"), .int64(2)])
                }
                #expect(sameVersion.constraint == "messages_by_version")
                // Only the rarely written tables check their conversation
                // (0006: the checks were a tenth of an append's cost);
                // the writer holds the conversation's row when it inserts.
                #expect(try strings(connection, """
                    SELECT conrelid::regclass::text || ':' || conname FROM pg_constraint WHERE contype = 'f' ORDER BY 1
                    """) == ["members:members_conversation_seq_fkey", "removed_members:removed_members_conversation_seq_fkey"])
                let noConversation = try #require(throws: PostgresError.self) {
                    try connection.query("INSERT INTO members VALUES ($1, 'ann', 'member', 0)", [.int64(seq + 1)])
                }
                #expect(noConversation.kind == .foreignKeyViolation)
                let badRole = try #require(throws: PostgresError.self) {
                    try connection.query("INSERT INTO members VALUES ($1, 'ann', 'admin', 0)", [.int64(seq)])
                }
                #expect(badRole.kind == .checkViolation)
                // User ids order byte by byte, whatever the locale.
                for user in ["b", "B", "a", "_"] {
                    try connection.query("INSERT INTO members VALUES ($1, $2, 'member', 0)", [.int64(seq), .text(user)])
                }
                #expect(try strings(connection, "SELECT user_id FROM members ORDER BY user_id") == ["B", "_", "a", "b"])
            }
        }

        @Test func theInboxMigrationNumbersExistingConversationsBelowTheCounter() async throws {
            try await withTestDatabase { uri in
                let connection = try PGConnection(uri: uri)
                let migrations = try PostgresSchema.migrations()
                let inbox = try #require(migrations.firstIndex { $0.name == "inbox" })
                try PostgresMigrator(migrations: Array(migrations[..<inbox])).migrate(connection)
                try connection.execute(sql: "INSERT INTO conversations (id, created_at) VALUES ('a', 0), ('b', 0)")
                #expect(try PostgresMigrator(migrations: migrations).migrate(connection).first == inbox + 1)
                #expect(try strings(connection, "SELECT id || '=' || activity FROM conversations ORDER BY id") == ["a=1", "b=2"])
                #expect(try strings(connection, "SELECT value FROM activity_counter") == ["2"])
                // The counter is one row.
                let second = try #require(throws: PostgresError.self) {
                    try connection.execute(sql: "INSERT INTO activity_counter VALUES (2, 0)")
                }
                #expect(second.kind == .checkViolation)
            }
        }

        @Test func theTextBytesMigrationKeepsStoredTextByteForByte() async throws {
            try await withTestDatabase { uri in
                let connection = try PGConnection(uri: uri)
                let migrations = try PostgresSchema.migrations()
                let textBytes = try #require(migrations.firstIndex { $0.name == "text_bytes" })
                try PostgresMigrator(migrations: Array(migrations[..<textBytes])).migrate(connection)
                // Text as 0001 stored it (no NUL: text could not hold one).
                let title = "tïtle 😀 e\u{301} \\x41 {a,b}"
                let sender = "sënder 𝄞 \u{FFFF}"
                let body = "bödy 'quoted' \"double\" back\\slash \u{10FFFF}"
                let seq = try connection.query("INSERT INTO conversations (id, title, created_at) VALUES ('c', $1::text, 0) RETURNING seq",
                                               [.text(title)]).int64(0, 0)
                try connection.query("""
                    INSERT INTO messages (conversation_seq, id, sender, body, created_at, client_id, created_version, version)
                    VALUES ($1, 1, $2::text, $3::text, 0, $4::text, 1, 1), ($1, 2, 'b', 'c', 0, NULL, 2, 2)
                    """, [.int64(seq), .text(sender), .text(body), .text("k ✓")])
                #expect(try PostgresMigrator(migrations: migrations).migrate(connection) == Array(textBytes + 1...migrations.count))
                let types = try strings(connection, """
                    SELECT table_name || '.' || column_name || ' ' || data_type FROM information_schema.columns
                    WHERE table_schema = 'public' AND column_name IN ('title', 'sender', 'body', 'client_id') ORDER BY 1
                    """)
                #expect(types == ["conversations.title bytea", "messages.body bytea", "messages.client_id bytea",
                                  "messages.sender bytea"])
                let stored = try connection.query("SELECT sender, body, client_id FROM messages ORDER BY id")
                #expect(stored.bytes(0, 0) == Array(sender.utf8) && stored.bytes(0, 1) == Array(body.utf8)
                        && stored.bytes(0, 2) == Array("k ✓".utf8))
                #expect(stored.isNull(1, 2) && stored.string(1, 1) == "c")
                #expect(try connection.query("SELECT title FROM conversations").bytes(0, 0) == Array(title.utf8))
                // client_id's unique index survived the change of type.
                let reused = try #require(throws: PostgresError.self) {
                    try connection.query("""
                        INSERT INTO messages (conversation_seq, id, sender, body, created_at, client_id, created_version, version)
                        VALUES ($1, 3, 'a', 'b', 0, $2, 3, 3)
                        """, [.int64(seq), .bytes(Array("k ✓".utf8))])
                }
                #expect(reused.constraint == "messages_by_client_id")
            }
        }

        /// 0007 gives each conversation its latest stored time, the floor of
        /// the next append's (PostgresBatch+CreationTime): the latest, not
        /// the newest id's, as a bulk load before it did not keep to the
        /// floor; NULL for a conversation without messages.
        @Test func theNewestTimeMigrationTakesEachConversationsLatestTime() async throws {
            try await withTestDatabase { uri in
                let connection = try PGConnection(uri: uri)
                let migrations = try PostgresSchema.migrations()
                let newestTime = try #require(migrations.firstIndex { $0.name == "conversation_newest_time" })
                try PostgresMigrator(migrations: Array(migrations[..<newestTime])).migrate(connection)
                let seq = try connection.query("INSERT INTO conversations (id, created_at, newest_id) VALUES ('c', 0, 3) RETURNING seq")
                    .int64(0, 0)
                try connection.execute(sql: "INSERT INTO conversations (id, created_at) VALUES ('empty', 0)")
                try connection.query("""
                    INSERT INTO messages (conversation_seq, id, sender, body, created_at, created_version, version)
                    VALUES ($1, 1, 'a', 'x', 5000, 1, 1), ($1, 2, 'a', 'y', 9000, 2, 2), ($1, 3, 'a', 'z', 7000, 3, 3)
                    """, [.int64(seq)])
                #expect(try PostgresMigrator(migrations: migrations).migrate(connection) == Array(newestTime + 1...migrations.count))
                #expect(try strings(connection, "SELECT id || '=' || coalesce(newest_created_at::text, 'null') FROM conversations ORDER BY id")
                    == ["c=9000", "empty=null"])
            }
        }

        @Test func aChangedMigrationIsRefused() async throws {
            try await withTestDatabase { uri in
                let connection = try PGConnection(uri: uri)
                let migrations = try PostgresSchema.migrations()
                try PostgresMigrator(migrations: migrations).migrate(connection)
                var tampered = migrations
                tampered[0] = Migration(version: 1, name: "init", sql: migrations[0].sql + "\n-- edited after shipping\n")
                let error = try #require(throws: PostgresMigrationError.self) {
                    try PostgresMigrator(migrations: tampered).migrate(connection)
                }
                guard case .refused(let reason) = error else { Issue.record("wrong error \(error)"); return }
                #expect(reason.contains("0001_init changed"))
                // Nothing was applied, and the lock was given back.
                #expect(try strings(connection, "SELECT count(*) FROM schema_migrations") == ["\(migrations.count)"])
                #expect(try PGConnection(uri: uri).query("SELECT pg_try_advisory_lock($1)", [.int64(PostgresMigrator.lockKey)]).bool(0, 0))
            }
        }

        @Test func aNewerDatabaseIsRefused() async throws {
            try await withTestDatabase { uri in
                let connection = try PGConnection(uri: uri)
                try PostgresMigrator(migrations: PostgresSchema.migrations()).migrate(connection)
                try connection.execute(sql: "INSERT INTO schema_migrations (version, name, checksum) VALUES (99, 'future', 'x')")
                let error = try #require(throws: PostgresMigrationError.self) {
                    try PostgresMigrator(migrations: PostgresSchema.migrations()).migrate(connection)
                }
                guard case .refused(let reason) = error else { Issue.record("wrong error \(error)"); return }
                #expect(reason.contains("99"))
                #expect(reason.contains("newer"))
            }
        }

        @Test func aFailingMigrationLeavesNothingHalfApplied() async throws {
            try await withTestDatabase { uri in
                let connection = try PGConnection(uri: uri)
                var migrations = try PostgresSchema.migrations()
                migrations.append(Migration(version: migrations.count + 1, name: "broken", sql: """
                    CREATE TABLE half (x integer);
                    INSERT INTO no_such_table VALUES (1);
                    """))
                let error = try #require(throws: PostgresMigrationError.self) {
                    try PostgresMigrator(migrations: migrations).migrate(connection)
                }
                guard case .failed(let label, let cause) = error else { Issue.record("wrong error \(error)"); return }
                #expect(label.hasSuffix("_broken"))
                #expect(cause.sqlState == "42P01")
                #expect(try strings(connection, "SELECT version FROM schema_migrations ORDER BY version")
                    == (1..<migrations.count).map(String.init))
                #expect(try strings(connection, "SELECT count(*) FROM pg_tables WHERE tablename = 'half'") == ["0"])
                #expect(connection.transactionStatus == .idle)
                #expect(try PostgresMigrator(migrations: PostgresSchema.migrations()).migrate(connection) == [])
            }
        }

        @Test func migratorsStartingTogetherApplyEachMigrationOnce() async throws {
            try await withTestDatabase { uri in
                let migrations = try PostgresSchema.migrations()
                // A slow last migration widens the window in which a racer
                // without the lock would see a half-migrated database.
                let slow = migrations + [Migration(version: migrations.count + 1, name: "slow",
                                                           sql: "SELECT pg_sleep(0.2); CREATE TABLE slow (x integer);")]
                let applied = try race(racers: 4, uri: uri, migrations: slow)
                #expect(applied.count == 4)
                #expect(applied.filter { !$0.isEmpty } == [Array(1...slow.count)])
                let check = try PGConnection(uri: uri)
                #expect(try strings(check, "SELECT count(*) FROM schema_migrations") == ["\(slow.count)"])
                #expect(try strings(check, "SELECT count(*) FROM pg_tables WHERE tablename = 'slow'") == ["1"])
            }
        }

        /// Runs `racers` migrators on threads of their own, each on its own
        /// connection, released together once all are connected; returns
        /// what each applied.
        private func race(racers: Int, uri: String, migrations: [Migration]) throws -> [[Int]] {
            let outcomes = Mutex<[Result<[Int], PostgresMigrationError>]>([])
            let connected = DispatchSemaphore(value: 0)
            let start = DispatchSemaphore(value: 0)
            let group = DispatchGroup()
            for _ in 0..<racers {
                DispatchQueue.global().async(group: group) {
                    let connection = Result { () throws(PostgresError) in try PGConnection(uri: uri) }
                    connected.signal()
                    start.wait()
                    let outcome = Result { () throws(PostgresMigrationError) in
                        try PostgresMigrator(migrations: migrations).migrate(connection.mapError(PostgresMigrationError.database).get())
                    }
                    outcomes.withLock { $0.append(outcome) }
                }
            }
            for _ in 0..<racers { connected.wait() }
            for _ in 0..<racers { start.signal() }
            group.wait()
            return try outcomes.withLock { outcomes in try outcomes.map { try $0.get() } }
        }
    }
}
