import HistoryStore
import HistoryTestSupport
import Testing
@testable import HistoryPostgres

extension PostgresTests {
    /// The PostgreSQL store keeps each message's JSON from `"sender"` on
    /// beside its row (`json_tail`, migrations/postgres/0005) and a page
    /// reads those bytes instead of eight columns. These tests hold the
    /// bytes to `MessageJSONTail.encode` of the values every write answered
    /// (the encoder is held to `JSONWriter`'s bytes by
    /// StoredJSONIdentityTests, and over HTTP on this store by CI's
    /// PostgreSQL pass), and check the rows that must have none are read
    /// whole into the same messages.
    @Suite("PostgreSQL stored message JSON")
    struct PostgresStoredJSONTests {
        static let room = ConversationID("stored-json")!

        /// Every control character, the escapes by name, text of two to
        /// four bytes, a NUL.
        static let bodies: [String] = [
            "plain", "he said \"hi\" \\ back\\", "line\nbreak\r\nand\ttab",
            String((0..<32).map { Character(Unicode.Scalar(UInt8($0))) }), "\u{7F}del",
            "é, 中文, 😀, \u{2028}", "\u{0}nul",
        ]

        private static func open(_ uri: String) throws -> PostgresHistoryStore {
            try PostgresHistoryStore(configuration: PostgresStoreConfiguration(uri: uri, readerCount: 2))
        }

        /// Each page row's stored bytes, nil where the row was read whole.
        private static func tails(_ page: Page) -> [String?] {
            page.rows.withText { text in
                page.rows.records.map { record in
                    record.storedTail.map { String(decoding: UnsafeBufferPointer(rebasing: text[$0]), as: UTF8.self) }
                }
            }
        }

        private static func nullTails(_ uri: String) throws -> Int64 {
            let connection = try PGConnection(uri: uri)
            defer { connection.close() }
            return try connection.query("SELECT count(*) FROM messages WHERE json_tail IS NULL").int64(0, 0)
        }

        /// Appends of both kinds (one by one with a reply, and plain ones
        /// sent together so they share a run), a bulk load, an edit and a
        /// delete: every row gets the encoder's bytes of what was answered.
        private static func writeEveryWay(_ store: PostgresHistoryStore) async throws -> [Message] {
            _ = try await store.createConversation(id: room)
            var answered: [Message] = []
            for (index, body) in bodies.enumerated() {
                let new = NewMessage(sender: index % 2 == 0 ? "ana" : "b\u{E9}la \"q\"", body: body,
                                     clientID: index % 3 == 0 ? "client-\(index)\t\"x\"" : nil, replyTo: answered.last?.id)
                answered.append(try await store.append(new, to: room).message)
            }
            let batched = try await withThrowingTaskGroup(of: Message.self) { group in
                for (index, body) in bodies.enumerated() {
                    group.addTask {
                        try await store.append(NewMessage(sender: "run", body: body, clientID: "run-\(index)"), to: room).message
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            answered += batched.sorted { $0.id < $1.id }
            let loaded = try #require(try store.bulkAppend(bodies.map { NewMessage(sender: "bulk", body: $0) }, to: room))
            answered += try loaded.map { try store.message($0, in: room) }
            answered[2] = try await store.edit(messageID: answered[2].id, in: room, body: "edited \u{1}")
            answered[4] = try await store.delete(messageID: answered[4].id, in: room)
            return answered
        }

        @Test(.timeLimit(.minutes(2)))
        func everyWriteStoresTheEncodersBytesOfWhatItAnswered() async throws {
            try await withTestDatabase { uri in
                let store = try Self.open(uri)
                defer { store.close() }
                let answered = try await Self.writeEveryWay(store)
                #expect(answered[2].editedAt != nil && answered[4].deleted)
                #expect(try Self.nullTails(uri) == 0)

                let page = try store.page(of: Self.room, PageQuery(limit: 200))
                #expect(Self.tails(page) == answered.map(MessageJSONTail.encode), "every row was read as the bytes its write stored")
                #expect(page.messages == answered, "the bytes decode to the values the writes answered")
                // Every page shape reads the stored bytes.
                let middle = answered[answered.count / 2].id
                for query in [PageQuery(cursor: .before(middle), limit: 5), PageQuery(cursor: .after(middle), limit: 5),
                              PageQuery(cursor: .after(middle), limit: 5, window: 100), PageQuery(cursor: .around(middle), limit: 5),
                              PageQuery(cursor: .aroundTime(answered[0].createdAt), limit: 5),
                              PageQuery(cursor: .between(after: answered[0].id, before: middle), limit: 5)] {
                    let shaped = try store.page(of: Self.room, query)
                    #expect(!shaped.rows.isEmpty && Self.tails(shaped).allSatisfy { $0 != nil }, "\(query)")
                    #expect(shaped.messages == answered.filter { message in shaped.messages.contains { $0.id == message.id } })
                }
            }
        }

        /// An instance whose clock is behind the conversation's newest
        /// message stores that message's time (PostgresBatch+CreationTime:
        /// the floor is the conversation row's `newest_created_at`, which
        /// the instance ahead wrote with its message), and the bytes of
        /// the time stored, both kinds of append, at once. A page that
        /// meets a row without bytes (here the hand-moved first one) is
        /// read whole, in one statement.
        @Test(.timeLimit(.minutes(2)))
        func anAppendBehindTheNewestMessagesTimeStoresThatTimeAndItsBytes() async throws {
            try await withTestDatabase { uri in
                let store = try Self.open(uri)
                defer { store.close() }
                _ = try await store.createConversation(id: Self.room)
                let first = try await store.append(NewMessage(sender: "ana", body: "first"), to: Self.room).message
                let ahead = first.createdAt.millisecondsSinceEpoch + 3_600_000
                let connection = try PGConnection(uri: uri)
                defer { connection.close() }
                // As an instance an hour ahead would have written it.
                try connection.query("UPDATE messages SET created_at = $1 WHERE id = $2", [.int64(ahead), .int64(first.id)])
                try connection.query("UPDATE conversations SET newest_created_at = $1 WHERE id = $2",
                                     [.int64(ahead), .text(Self.room.rawValue)])
                // The trigger dropped the bytes that no longer hold.
                #expect(try Self.nullTails(uri) == 1)

                let replied = try await store.append(NewMessage(sender: "ana", body: "reply", replyTo: first.id), to: Self.room).message
                let plain = try await store.append(NewMessage(sender: "bo", body: "plain"), to: Self.room).message
                #expect(replied.createdAt.millisecondsSinceEpoch == ahead && plain.createdAt.millisecondsSinceEpoch == ahead)
                let loaded = try #require(try store.bulkAppend([NewMessage(sender: "bulk", body: "loaded")], to: Self.room))
                let bulk = try store.message(loaded.lowerBound, in: Self.room)
                #expect(bulk.createdAt.millisecondsSinceEpoch == ahead)
                #expect(try Self.nullTails(uri) == 1)
                let stored = try connection.query("SELECT json_tail FROM messages WHERE id = ANY($1::bigint[]) ORDER BY id",
                                                  [.text("{\(replied.id),\(plain.id),\(bulk.id)}")])
                #expect((0..<stored.rowCount).map { stored.string($0, 0) } == [replied, plain, bulk].map(MessageJSONTail.encode))
                #expect(try connection.query("SELECT newest_created_at FROM conversations WHERE id = $1",
                                             [.text(Self.room.rawValue)]).int64(0, 0) == ahead)
                let page = try store.page(of: Self.room, PageQuery(limit: 10))
                #expect(Self.tails(page) == [nil, nil, nil, nil], "read whole, as the first row has no bytes")
                var moved = first
                moved.createdAt = Timestamp(millisecondsSinceEpoch: ahead)
                #expect(page.messages == [moved, replied, plain, bulk])
                // A jump by time meets the row without bytes too: read whole,
                // in around's shape, the anchor the first message of that time.
                let jump = try store.page(of: Self.room, PageQuery(cursor: .aroundTime(moved.createdAt), limit: 10))
                #expect(Self.tails(jump) == [nil, nil, nil, nil] && jump.messages == [moved, replied, plain, bulk])
                #expect(jump.anchor == Page.Anchor(id: first.id, found: true, index: 0))
                let newer = try store.page(of: Self.room, PageQuery(cursor: .after(first.id), limit: 10))
                #expect(Self.tails(newer) == [replied, plain, bulk].map(MessageJSONTail.encode) && newer.messages == [replied, plain, bulk])
            }
        }

        /// Rows without bytes (written before the migration) are read whole
        /// into the same messages, and the next start fills them with the
        /// encoder's bytes.
        @Test(.timeLimit(.minutes(2)))
        func rowsWithoutBytesAreReadWholeThenFilledAtStart() async throws {
            try await withTestDatabase { uri in
                var answered: [Message] = []
                do {
                    let store = try Self.open(uri)
                    defer { store.close() }
                    answered = try await Self.writeEveryWay(store)
                    // More than one batch of the fill, written as before the migration.
                    let old = (0..<(PostgresStoredJSONFill.batchSize + 200)).map { NewMessage(sender: "old", body: "old \($0)\t") }
                    let oldIDs = try #require(try store.bulkAppend(old, to: Self.room))
                    answered += try oldIDs.map { try store.message($0, in: Self.room) }
                    let connection = try PGConnection(uri: uri)
                    defer { connection.close() }
                    try connection.query("UPDATE messages SET json_tail = NULL WHERE id % 2 = 0")
                    let mixed = try store.page(of: Self.room, PageQuery(limit: 200))
                    #expect(Self.tails(mixed).allSatisfy { $0 == nil }, "a page that meets a row without bytes is read whole")
                    #expect(mixed.messages == Array(answered.suffix(200)))
                }
                #expect(try Self.nullTails(uri) > Int64(PostgresStoredJSONFill.batchSize / 2))

                let reopened = try Self.open(uri)
                defer { reopened.close() }
                #expect(try Self.nullTails(uri) == 0)
                var filled: [Message] = []
                var tails: [String?] = []
                var cursor = PageQuery(cursor: .after(0), limit: 200)
                while true {
                    let page = try reopened.page(of: Self.room, cursor)
                    filled += page.messages
                    tails += Self.tails(page)
                    guard page.hasNewer, let last = page.messages.last else { break }
                    cursor = PageQuery(cursor: .after(last.id), limit: 200)
                }
                #expect(filled == answered)
                #expect(tails == answered.map(MessageJSONTail.encode))
            }
        }

        /// A change made by other means (an older build still running, a
        /// hand-written statement) drops the bytes it made untrue, and the
        /// fill never writes bytes over a version newer than the one it read.
        @Test(.timeLimit(.minutes(2)))
        func bytesNeverOutliveTheColumnsTheyWereBuiltFrom() async throws {
            try await withTestDatabase { uri in
                let store = try Self.open(uri)
                defer { store.close() }
                _ = try await store.createConversation(id: Self.room)
                let message = try await store.append(NewMessage(sender: "ana", body: "before"), to: Self.room).message
                let connection = try PGConnection(uri: uri)
                defer { connection.close() }
                try connection.query("UPDATE messages SET body = $1 WHERE id = $2", [.storedText("changed by hand"), .int64(message.id)])
                let page = try store.page(of: Self.room, PageQuery(limit: 10))
                #expect(Self.tails(page) == [nil])
                #expect(page.messages.map(\.body) == ["changed by hand"])

                // The fill read the row at an older version: it writes nothing.
                let stale = try #require(MessageJSONTail.encode(message))
                let written = try connection.execute(connection.cachedStatement(sql: PostgresStoredJSONFill.fillSQL), [
                    .text("{\(try Self.seq(connection))}"), .text("{\(message.id)}"), .text("{\(message.version - 1)}"),
                    .storedTexts([stale]),
                ])
                #expect(written.affectedRows == 0)
                #expect(try store.page(of: Self.room, PageQuery(limit: 10)).messages.map(\.body) == ["changed by hand"])
                // At the version it holds, the row takes the bytes of what it holds.
                var current = message
                current.body = "changed by hand"
                let filled = try connection.execute(connection.cachedStatement(sql: PostgresStoredJSONFill.fillSQL), [
                    .text("{\(try Self.seq(connection))}"), .text("{\(message.id)}"), .text("{\(message.version)}"),
                    .storedTexts([MessageJSONTail.encode(current)]),
                ])
                #expect(filled.affectedRows == 1)
                let refilled = try store.page(of: Self.room, PageQuery(limit: 10))
                #expect(Self.tails(refilled) == [MessageJSONTail.encode(current)] && refilled.messages == [current])
            }
        }

        private static func seq(_ connection: PGConnection) throws -> Int64 {
            try connection.query("SELECT seq FROM conversations WHERE id = $1", [.text(room.rawValue)]).int64(0, 0)
        }
    }
}
