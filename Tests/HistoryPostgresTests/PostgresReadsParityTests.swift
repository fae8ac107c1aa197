import CSQLite
import HistoryPostgres
import HistoryStore
import HistorySQLite
import HistoryTestSupport
import Testing

extension PostgresTests {
    /// The PostgreSQL reads answer what the SQLite reads answer, compared on
    /// the same data: a workload runs through the SQLite store, its tables
    /// are copied row for row into PostgreSQL (same seqs, ids, versions,
    /// activity values), and every read is asked of both, errors included.
    @Suite struct PostgresReadsParityTests {
        @Test func everyReadMatchesTheSQLiteStore() async throws {
            try await withTemporaryDirectory { directory in
                let store = try SQLiteHistoryStore(configuration: SQLiteStoreConfiguration(path: directory.databasePath))
                defer { store.close() }
                try await runWorkload(store)
                try await withTestDatabase { uri in
                    let fixture = try PostgresReadsFixture(uri: uri)
                    try copy(from: directory.databasePath, to: fixture.connection)
                    try compare(store, fixture.reads)
                }
            }
        }

        private let users = ["u", "v", "w", "x"].map { UserID($0)! }
        private let conversations = ["alpha", "beta", "gamma", "delta", "eps", "nope"].map { ConversationID($0)! }

        private func runWorkload(_ store: SQLiteHistoryStore) async throws {
            let (u, v, w) = (users[0], users[1], users[2])
            let (alpha, beta, gamma, delta, eps) = (conversations[0], conversations[1], conversations[2],
                                                    conversations[3], conversations[4])
            try await store.createConversation(id: alpha, title: "Alpha", owner: u)
            try await store.createConversation(id: beta, owner: v)
            try await store.createConversation(id: gamma, title: "Gamma", owner: u)
            try await store.createConversation(id: delta, owner: u)
            try await store.createConversation(id: eps, owner: v)
            try await store.putMember(v, in: alpha)
            try await store.putMember(w, in: alpha)
            try await store.putMember(u, in: beta)
            try await store.putMember(w, in: gamma)
            var ids: [ConversationID: [Int64]] = [:]
            let senders = [u, v, w]
            for index in 0..<48 {
                let conversation = [alpha, beta, gamma, eps, alpha, alpha][index % 6]
                let reply = index % 7 == 3 ? ids[conversation]?.last : nil
                let outcome = try await store.append(
                    NewMessage(sender: senders[index % 3].rawValue, body: "message \(index) ✓",
                               clientID: index % 5 == 0 ? "client-\(index)" : nil, replyTo: reply),
                    to: conversation)
                guard case .created(let message) = outcome else { Issue.record("not created: \(outcome)"); return }
                ids[conversation, default: []].append(message.id)
            }
            let a = ids[alpha]!, b = ids[beta]!, g = ids[gamma]!
            _ = try await store.edit(messageID: a[2], in: alpha, body: "edited")
            _ = try await store.delete(messageID: a[5], in: alpha)
            _ = try await store.edit(messageID: a[7], in: alpha, body: "edited too")
            _ = try await store.delete(messageID: b[1], in: beta)
            _ = try await store.delete(messageID: g.last!, in: gamma)
            _ = try await store.edit(messageID: a[2], in: alpha, body: "edited again")
            _ = try await store.markRead(u, in: alpha, upTo: a[10])
            _ = try await store.markRead(w, in: gamma, upTo: g[1])
            _ = try await store.markRead(v, in: beta, upTo: 0)
            _ = try await store.removeMember(w, from: alpha)
            _ = try await store.removeMember(u, from: beta)
            _ = try await store.putMember(u, in: beta)
            _ = try await store.removeMember(w, from: gamma)
            _ = try await store.putMember(v, role: .owner, in: gamma)
            for index in 0..<6 {
                _ = try await store.append(NewMessage(sender: v.rawValue, body: "late \(index)"), to: index % 2 == 0 ? alpha : beta)
            }
            // A user with more conversations than the small inbox reads
            // whole (256): its pages walk the inbox order. Every third has
            // no message; others' conversations lie between its own.
            let x = users[3]
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<360 {
                    group.addTask {
                        let id = ConversationID("x-\(index)")!
                        try await store.createConversation(id: id, owner: index % 4 == 0 ? v : x)
                        if index % 3 != 0 {
                            _ = try await store.append(NewMessage(sender: v.rawValue, body: "to x \(index)"), to: id)
                        }
                    }
                }
                try await group.waitForAll()
            }
            _ = try await store.markRead(x, in: ConversationID("x-1")!, upTo: 1)
        }

        // MARK: - Copying

        /// Every row of the SQLite file's tables into the migrated PostgreSQL database.
        private func copy(from path: String, to connection: PGConnection) throws {
            var handle: OpaquePointer?
            guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READONLY, nil) == SQLITE_OK, let handle else {
                throw Failure("cannot open \(path)")
            }
            defer { sqlite3_close(handle) }
            let tables: [(String, [String], String)] = [
                ("conversations", ["seq", "id", "title", "created_at", "message_count", "oldest_id", "newest_id", "version", "activity"],
                 "OVERRIDING SYSTEM VALUE"),
                ("messages", ["conversation_seq", "id", "sender", "body", "created_at", "edited_at", "deleted", "reply_to",
                              "client_id", "client_fingerprint", "created_version", "version"], ""),
                ("members", ["conversation_seq", "user_id", "role", "joined_at", "last_read_id", "activity"], ""),
                ("removed_members", ["user_id", "conversation_seq", "activity"], ""),
            ]
            for (table, columns, overriding) in tables {
                let placeholders = columns.indices.map { "$\($0 + 1)" }.joined(separator: ", ")
                let insert = "INSERT INTO \(table) (\(columns.joined(separator: ", "))) \(overriding) VALUES (\(placeholders))"
                for row in try rows(handle, "SELECT \(columns.joined(separator: ", ")) FROM \(table)", columns.count) {
                    try connection.query(insert, row)
                }
            }
            let counter = try rows(handle, "SELECT value FROM activity_counter", 1)
            try connection.query("UPDATE activity_counter SET value = $1", counter[0])
        }

        /// The rows of `sql`, every value as text (PostgreSQL parses it
        /// as the column's type) or NULL.
        private func rows(_ handle: OpaquePointer, _ sql: String, _ count: Int) throws -> [[PostgresValue]] {
            var statement: OpaquePointer?
            guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
                throw Failure("cannot prepare \(sql)")
            }
            defer { sqlite3_finalize(statement) }
            var rows: [[PostgresValue]] = []
            while sqlite3_step(statement) == SQLITE_ROW {
                rows.append((0..<Int32(count)).map { column in
                    guard sqlite3_column_type(statement, column) != SQLITE_NULL,
                          let text = sqlite3_column_text(statement, column) else { return .null }
                    return .text(String(cString: text))
                })
            }
            return rows
        }

        struct Failure: Error, CustomStringConvertible {
            var description: String
            init(_ description: String) { self.description = description }
        }

        // MARK: - Comparing

        private func same<T: Equatable>(_ what: @autoclosure () -> String,
                                        _ sqlite: () throws -> T, _ postgres: () throws -> T) -> Bool {
            let expected = Result { try sqlite() }.mapError { Failure("\($0)") }
            let got = Result { try postgres() }.mapError { Failure("\($0)") }
            let equal: Bool
            switch (expected, got) {
            case (.success(let lhs), .success(let rhs)): equal = lhs == rhs
            case (.failure(let lhs), .failure(let rhs)): equal = lhs.description == rhs.description
            default: equal = false
            }
            #expect(equal, "\(what()): SQLite \(expected), PostgreSQL \(got)")
            return equal
        }

        private func compare(_ store: SQLiteHistoryStore, _ reads: PostgresReads) throws {
            var compared = 0
            for id in conversations {
                #expect(same("conversation \(id)", { try store.conversation(id) }, { try reads.conversation(id).conversation }))
                let all = (try? store.page(of: id, PageQuery(limit: 200)).rows.records.map(\.id)) ?? []
                // Every message id, its neighbours (ids of other conversations
                // or none), and the ends.
                let positions = Set(all.flatMap { [$0 - 1, $0, $0 + 1] } + [0, 1, Int64.max, 68_719_476_735, 68_719_476_736])
                    .sorted()
                for limit in [1, 2, 3, 5, 200] {
                    var cursors: [PageCursor] = [.newest]
                    for position in positions {
                        cursors += [.before(position), .after(position), .around(position)]
                    }
                    for (index, after) in positions.enumerated() where index % 3 == 0 {
                        for before in positions where before % 2 == 0 || before == .max {
                            cursors.append(.between(after: after, before: before))
                        }
                    }
                    for cursor in cursors {
                        let query = PageQuery(cursor: cursor, limit: limit)
                        _ = same("page \(id) \(query)", { try store.page(of: id, query) }, { try reads.page(of: id, query) })
                        compared += 1
                    }
                    for position in positions {
                        for window in [1, 2, 5, 10_000] {
                            let query = PageQuery(cursor: .after(position), limit: limit, window: window)
                            _ = same("page \(id) \(query)", { try store.page(of: id, query) }, { try reads.page(of: id, query) })
                            compared += 1
                        }
                    }
                }
                for position in positions where position >= 0 {
                    _ = same("message \(position) in \(id)", { try store.message(position, in: id) }, { try reads.message(position, in: id) })
                }
                let version = (try? store.conversation(id).version) ?? 0
                for since in 0...(version + 2) {
                    for limit in [1, 2, 3, 100] {
                        var queries = [ChangeQuery(since: since, limit: limit)]
                        if let first = all.first, let last = all.last {
                            queries += [ChangeQuery(since: since, limit: limit, minID: all[all.count / 3]),
                                        ChangeQuery(since: since, limit: limit, maxID: all[all.count / 2]),
                                        ChangeQuery(since: since, limit: limit, minID: first + 1, maxID: last - 1)]
                        }
                        for query in queries {
                            _ = same("changes \(id) \(query)", { try store.changes(in: id, query) }, { try reads.changes(in: id, query) })
                            compared += 1
                        }
                    }
                }
                for after in [nil] + users.map(Optional.some) {
                    for limit in [1, 2, 10] {
                        _ = same("members \(id) after \(after?.rawValue ?? "-") \(limit)",
                                 { try store.members(of: id, after: after, limit: limit) },
                                 { try reads.members(of: id, after: after, limit: limit) })
                    }
                }
                for user in users {
                    _ = same("role \(user) in \(id)", { try store.role(of: user, in: id) }, { try reads.role(of: user, in: id) })
                }
            }
            for user in users {
                for limit in user == users[3] ? [7, 50, 200] : [1, 2, 3, 50] {
                    var cursor: String?
                    var pages = 0
                    repeat {
                        let query = InboxQuery(cursor: cursor, limit: limit)
                        let expected = try store.inbox(of: user, query)
                        let decoded = try cursor.map { try #require(InboxCursor(encoded: $0)) }
                        _ = same("inbox \(user) \(query)", { expected }, { try reads.inbox(of: user, limit: limit, after: decoded) })
                        cursor = expected.nextCursor
                        pages += 1
                        compared += 1
                    } while cursor != nil && pages < 100
                }
                let current = try reads.currentActivity()
                for since in stride(from: 0, through: current + 1, by: user == users[3] ? 37 : 1) {
                    for limit in [1, 2, 100] {
                        let query = InboxChangeQuery(since: since, limit: limit)
                        _ = same("inboxChanges \(user) \(query)", { try store.inboxChanges(of: user, query) },
                                 { try reads.inboxChanges(of: user, query) })
                        compared += 1
                    }
                }
            }
            #expect(compared > 5_000)
        }
    }
}
