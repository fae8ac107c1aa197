import HistoryTestSupport
import CSQLite
import Foundation
import Testing
@testable import HistoryStore
@testable import HistorySQLite

/// A database file may be swapped or edited by someone else. What it holds
/// must never run code on the writer, and values no operation of the store
/// can produce must fail the one operation with a clear error, never trap.
@Suite("Hostile database files")
struct HostileFileTests {
    // MARK: - Every connection is hardened

    @Test func writerAndReadersAreHardened() async throws {
        try await withTemporaryStore { store in
            let probe: (SQLiteConnection) -> (Int32, Int32, Int32, String?) = { connection in
                (connection.configurationFlag(SQLITE_DBCONFIG_DEFENSIVE),
                 connection.configurationFlag(SQLITE_DBCONFIG_TRUSTED_SCHEMA),
                 connection.configurationFlag(SQLITE_DBCONFIG_ENABLE_TRIGGER),
                 try? connection.scalarText(sql: "PRAGMA trusted_schema"))
            }
            let writer = store.withWriterConnection(probe)
            let reader = try store.withReaderConnection(probe)
            for (name, flags) in [("writer", writer), ("reader", reader)] {
                #expect(flags.0 == 1, "\(name): defensive")
                #expect(flags.1 == 0, "\(name): trusted_schema")
                #expect(flags.2 == 0, "\(name): triggers")
                #expect(flags.3 == "0", "\(name): PRAGMA trusted_schema")
            }
        }
    }

    /// Defensive mode: not even a statement run on the writer's own
    /// connection can rewrite the schema table.
    @Test func theSchemaTableCannotBeWrittenEvenOnPurpose() async throws {
        try await withTemporaryStore { store in
            let rewritten = store.withWriterConnection { connection in
                Result { () throws(SQLiteError) in
                    try connection.execute(sql: "PRAGMA writable_schema = ON")
                    try connection.execute(sql: "UPDATE sqlite_schema SET sql = 'CREATE TABLE x (y)' WHERE name = 'members'")
                }
            }
            #expect(throws: SQLiteError.self) { try rewritten.get() }
            let integrity = try store.checkIntegrity()
            #expect(integrity == ["ok"])
        }
    }

    /// Even a trigger the schema check did not see would never fire: the
    /// connections run none from the file.
    @Test func aTriggerInTheFileNeverFiresOnAStoreConnection() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.databasePath
            let setup = try SQLiteConnection(path: path)
            try setup.execute(sql: """
                CREATE TABLE t (x INTEGER);
                CREATE TABLE fired (x INTEGER);
                CREATE TRIGGER spy AFTER INSERT ON t BEGIN INSERT INTO fired VALUES (new.x); END;
                """)
            setup.close()
            let connection = try SQLiteConnection(path: path)
            defer { connection.close() }
            try connection.execute(sql: "INSERT INTO t VALUES (1)")
            #expect(try connection.scalarInt64(sql: "SELECT count(*) FROM t") == 1)
            #expect(try connection.scalarInt64(sql: "SELECT count(*) FROM fired") == 0)
        }
    }

    // MARK: - The schema is checked at open

    /// Each of these, added to a store's file by someone else, makes the
    /// store refuse to open it and name what it found.
    static let additions: [(sql: String, named: String)] = [
        ("CREATE TRIGGER evil AFTER INSERT ON messages BEGIN UPDATE conversations SET title = new.body; END",
         "trigger 'evil' on 'messages'"),
        ("CREATE VIEW peek AS SELECT body FROM messages", "view 'peek'"),
        ("CREATE INDEX slow ON messages (body)", "index 'slow' on 'messages'"),
        ("CREATE TABLE extra (x INTEGER)", "table 'extra'"),
        // A redefined table: the generated id no longer stays in the layout.
        ("""
         DROP INDEX messages_by_id; DROP INDEX messages_by_version; DROP INDEX messages_by_client_id;
         ALTER TABLE messages RENAME TO old_messages;
         CREATE TABLE messages (place INTEGER PRIMARY KEY, conversation_seq INTEGER GENERATED ALWAYS AS (place >> 36),
             id INTEGER GENERATED ALWAYS AS (place), sender TEXT, body TEXT, created_at INTEGER, edited_at INTEGER,
             deleted INTEGER, reply_to INTEGER, client_id TEXT, client_fingerprint INTEGER,
             created_version INTEGER, version INTEGER);
         DROP TABLE old_messages;
         CREATE UNIQUE INDEX messages_by_id ON messages (id);
         CREATE UNIQUE INDEX messages_by_version ON messages (conversation_seq, version);
         CREATE UNIQUE INDEX messages_by_client_id ON messages (conversation_seq, client_id) WHERE client_id IS NOT NULL;
         """, "on 'messages' is not defined as the migrations define it"),
        ("DROP INDEX members_by_user", "lacks the index 'members_by_user'"),
    ]

    @Test(arguments: additions.indices)
    func aTamperedSchemaIsRefusedAtOpen(_ index: Int) async throws {
        let (sql, named) = Self.additions[index]
        try await withTemporaryDirectory { directory in
            let path = directory.databasePath
            let store = try SQLiteHistoryStore(configuration: SQLiteStoreConfiguration(path: path, durability: .normal))
            try await store.make("c")
            try await store.post(2, to: "c")
            store.close()
            try tamper(path, sql)
            do {
                _ = try SQLiteHistoryStore(configuration: SQLiteStoreConfiguration(path: path, durability: .normal))
                Issue.record("a tampered file was opened")
            } catch {
                guard case .migration(let reason)? = error as? StoreError else { Issue.record("wrong error \(error)"); return }
                #expect(reason.contains(named), "\(reason)")
                #expect(reason.contains("0010_"), "names the migrations the file records: \(reason)")
            }
        }
    }

    /// The refusal quotes names from the file, which must not carry their
    /// control characters or overrides to the operator's terminal.
    @Test func namesFromTheFileAreQuotedInPrintableASCII() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.databasePath
            try SQLiteHistoryStore(configuration: SQLiteStoreConfiguration(path: path, durability: .normal)).close()
            let hostileName = "\u{1B}[2J\n\u{202E}\\x41" + String(repeating: "z", count: 500)
            try tamper(path, "CREATE VIEW \"\(hostileName)\" AS SELECT 1")
            do {
                _ = try SQLiteHistoryStore(configuration: SQLiteStoreConfiguration(path: path, durability: .normal))
                Issue.record("a tampered file was opened")
            } catch {
                let reason = "\(error)"
                #expect(reason.contains(#"view '\x1B[2J\x0A\xE2\x80\xAE\x5Cx41zzz"#), "\(reason)")
                #expect(reason.utf8.allSatisfy { (0x20...0x7E).contains($0) }, "\(reason)")
                #expect(reason.utf8.count < 400, "a long name is cut: \(reason)")
            }
        }
    }

    /// A file that records only the first migrations is checked against
    /// what those create, then migrated.
    @Test func anOlderUntamperedFileIsAcceptedAndMigrated() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.databasePath
            let first = Array(try Migration.bundled().prefix(2))
            let connection = try SQLiteConnection(path: path)
            _ = try SQLiteMigrator(migrations: first).migrate(connection)
            connection.close()
            let store = try SQLiteHistoryStore(configuration: SQLiteStoreConfiguration(path: path, durability: .normal))
            defer { store.close() }
            try await store.make("c")
            #expect(try queryStrings(path, "SELECT count(*) FROM schema_migrations") == ["\(try Migration.bundled().count)"])
        }
    }

    // MARK: - Stored values that would overflow

    @Test func aVersionAtInt64MaxFailsEachWriteClearly() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.databasePath
            let store = try SQLiteHistoryStore(configuration: SQLiteStoreConfiguration(path: path, durability: .normal))
            try await store.make("c")
            try await store.make("other")
            let message = try await store.post(1, to: "c")[0]
            store.close()
            try tamper(path, "UPDATE conversations SET version = 9223372036854775807 WHERE id = 'c'")

            let reopened = try SQLiteHistoryStore(configuration: SQLiteStoreConfiguration(path: path, durability: .normal))
            defer { reopened.close() }
            let failures: [(String, StoreError?)] = [
                ("append", await asyncFailure { try await reopened.append(NewMessage(sender: "ana", body: "x"), to: cid("c")) }),
                ("edit", await asyncFailure { try await reopened.edit(messageID: message.id, in: cid("c"), body: "y") }),
                ("delete", await asyncFailure { try await reopened.delete(messageID: message.id, in: cid("c")) }),
                ("bulk", failure { try reopened.bulkAppend([NewMessage(sender: "ana", body: "x")], to: cid("c")) }),
            ]
            for (operation, error) in failures {
                guard case .storage(let failure)? = error else { Issue.record("\(operation): \(String(describing: error))"); continue }
                #expect(failure.code == String(SQLITE_CORRUPT), "\(operation)")
                #expect(failure.message.contains("version 9223372036854775807"), "\(operation): \(failure)")
                #expect(failure.message.contains("altered"), "\(operation): \(failure)")
            }
            // Nothing was written, reads still answer, other conversations still take writes.
            #expect(try reopened.page(of: cid("c"), PageQuery()).messages.map(\.body) == ["message 0"])
            #expect(try reopened.conversation(cid("c")).version == Int64.max)
            try await reopened.post(1, to: "other")
            #expect(try reopened.checkIntegrity() == ["ok"])
        }
    }

    @Test func aMessageCountAtInt64MaxFailsTheAppendClearly() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.databasePath
            let store = try SQLiteHistoryStore(configuration: SQLiteStoreConfiguration(path: path, durability: .normal))
            try await store.make("c")
            store.close()
            try tamper(path, "UPDATE conversations SET message_count = 9223372036854775807")
            let reopened = try SQLiteHistoryStore(configuration: SQLiteStoreConfiguration(path: path, durability: .normal))
            defer { reopened.close() }
            for error in [await asyncFailure { try await reopened.append(NewMessage(sender: "ana", body: "x"), to: cid("c")) },
                          failure { try reopened.bulkAppend([NewMessage(sender: "ana", body: "x")], to: cid("c")) }] {
                guard case .storage(let failure)? = error else { Issue.record("\(String(describing: error))"); continue }
                #expect(failure.code == String(SQLITE_CORRUPT))
                #expect(failure.message.contains("counts 9223372036854775807 messages"), "\(failure)")
            }
            #expect(try reopened.conversation(cid("c")).messageCount == Int64.max)
        }
    }

    /// Seqs past the layout, where `place` arithmetic would overflow or
    /// reach into another conversation, and ones below it.
    @Test(arguments: [Int64.max, MessagePlace.maximumSeq + 1, 0, -1, Int64.min])
    func aConversationKeyOutsideTheLayoutFailsReadsAndWritesClearly(_ seq: Int64) async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.databasePath
            let store = try SQLiteHistoryStore(configuration: SQLiteStoreConfiguration(path: path, durability: .normal))
            try await store.make("c")
            try await store.putMember(UserID("ana")!, role: .owner, in: cid("c"))
            let message = try await store.post(1, to: "c")[0]
            store.close()
            try tamper(path, """
                UPDATE members SET conversation_seq = \(seq);
                UPDATE messages SET place = (\(seq) << 36) | id;
                UPDATE conversations SET seq = \(seq);
                """)
            let reopened = try SQLiteHistoryStore(configuration: SQLiteStoreConfiguration(path: path, durability: .normal))
            defer { reopened.close() }
            let failures: [(String, StoreError?)] = [
                ("page", failure { try reopened.page(of: cid("c"), PageQuery()) }),
                ("before", failure { try reopened.page(of: cid("c"), PageQuery(cursor: .before(message.id))) }),
                ("after", failure { try reopened.page(of: cid("c"), PageQuery(cursor: .after(0))) }),
                ("message", failure { try reopened.message(message.id, in: cid("c")) }),
                ("changes", failure { try reopened.changes(in: cid("c"), ChangeQuery(since: 0)) }),
                ("role", failure { try reopened.role(of: UserID("ana")!, in: cid("c")) }),
                ("members", failure { try reopened.members(of: cid("c"), after: nil, limit: 10) }),
                ("append", await asyncFailure { try await reopened.append(NewMessage(sender: "ana", body: "x"), to: cid("c")) }),
                ("edit", await asyncFailure { try await reopened.edit(messageID: message.id, in: cid("c"), body: "y") }),
                ("bulk", failure { try reopened.bulkAppend([NewMessage(sender: "ana", body: "x")], to: cid("c")) }),
            ]
            for (operation, error) in failures {
                guard case .storage(let failure)? = error else { Issue.record("\(operation): \(String(describing: error))"); continue }
                #expect(failure.code == String(SQLITE_CORRUPT), "\(operation)")
                #expect(failure.message.contains("internal key \(seq)"), "\(operation): \(failure)")
            }
        }
    }

    /// Timestamps at the ends of Int64 still format as 24 characters. The
    /// stored JSON is cleared with them: such rows have none (no RFC 3339
    /// year holds their times), the fill at open leaves them so, and a
    /// page reads them whole.
    @Test func extremeStoredTimesFormatWithoutTrapping() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.databasePath
            let store = try SQLiteHistoryStore(configuration: SQLiteStoreConfiguration(path: path, durability: .normal))
            try await store.make("c")
            try await store.post(2, to: "c")
            store.close()
            try tamper(path, """
                UPDATE messages SET created_at = CASE WHEN id % 2 = 0 THEN 9223372036854775807 ELSE -9223372036854775808 END,
                                    edited_at = -9223372036854775808, json_tail = NULL;
                UPDATE conversations SET created_at = -9223372036854775808;
                """)
            let reopened = try SQLiteHistoryStore(configuration: SQLiteStoreConfiguration(path: path, durability: .normal))
            defer { reopened.close() }
            let page = try reopened.page(of: cid("c"), PageQuery())
            #expect(page.messages.count == 2)
            for message in page.messages {
                #expect(message.createdAt.rfc3339.utf8.count == 24)
                #expect(message.editedAt?.rfc3339.utf8.count == 24)
            }
            #expect(try reopened.conversation(cid("c")).createdAt.rfc3339.utf8.count == 24)
        }
    }

    // MARK: - Helpers

    /// Edits the file as someone else would, with SQLite and nothing of the store.
    private func tamper(_ path: String, _ sql: String) throws {
        let connection = try SQLiteConnection(path: path)
        defer { connection.close() }
        try connection.execute(sql: sql)
    }

    private func failure<T>(_ body: () throws -> T) -> StoreError? {
        do {
            _ = try body()
            return nil
        } catch let error as StoreError {
            return error
        } catch {
            Issue.record("not a StoreError: \(error)")
            return nil
        }
    }

    private func asyncFailure<T>(_ body: () async throws -> T) async -> StoreError? {
        do {
            _ = try await body()
            return nil
        } catch let error as StoreError {
            return error
        } catch {
            Issue.record("not a StoreError: \(error)")
            return nil
        }
    }
}
