import HistoryPostgres
import HistoryStore
import HistorySQLite
import HistoryTestSupport
import Testing

extension PostgresTests {
    /// The free text a client writes (sender, body, client_id, title) comes
    /// back with the very bytes it was written with, on every path that
    /// writes or reads it: migrations/postgres/0003_text_bytes.sql keeps it
    /// as `bytea`. Compared as UTF-8 bytes, never with `String.==`, which
    /// takes "é" and "e\u{301}" for the same text.
    @Suite("PostgreSQL keeps free text exactly")
    struct PostgresStoredTextTests {
        /// Texts `text` cannot hold (U+0000), that an escaping layer could
        /// change (quotes, backslashes, braces, the word NULL, something
        /// that reads as bytea hex), and that Unicode normalisation would
        /// (a decomposed é); noncharacters and astral code points.
        static let texts: [String] = [
            "nul\u{0}inside",
            "\u{0}",
            "\u{0}\u{0}leading, trailing\u{0}",
            "U+FFFF \u{FFFF}, U+FFFE \u{FFFE}",
            "astral 𝄞 😀 \u{10FFFF} \u{1F469}\u{200D}\u{1F469}\u{200D}\u{1F467}",
            "decomposed e\u{301} and composed \u{E9}",
            "quote ' \"double\" back\\slash {a,b} NULL \t\n\r",
            "\\x4142",
        ]

        /// 16 KiB exactly (`MessageRules.maximumBodyBytes`), with a NUL
        /// every 8 bytes.
        static let longBody = String(repeating: "a\u{0}\u{E9}\u{1F600}", count: MessageRules.maximumBodyBytes / 8)

        /// What must survive: sender, body and client_id, as bytes.
        private static func bytes(_ message: Message) -> [[UInt8]?] {
            [Array(message.sender.utf8), Array(message.body.utf8), message.clientID.map { Array($0.utf8) }]
        }

        private static func bytes(_ message: NewMessage) -> [[UInt8]?] {
            [Array(message.sender.utf8), Array(message.body.utf8), message.clientID.map { Array($0.utf8) }]
        }

        private static func open(_ uri: String) throws -> PostgresHistoryStore {
            try PostgresHistoryStore(configuration: PostgresStoreConfiguration(uri: uri, readerCount: 2))
        }

        @Test func longBodyIsTheLargestAllowed() {
            #expect(Self.longBody.utf8.count == MessageRules.maximumBodyBytes)
        }

        @Test(.timeLimit(.minutes(2)))
        func everyWriteAndReadPathKeepsTheBytes() async throws {
            try await withTestDatabase { uri in
                let store = try Self.open(uri)
                defer { store.close() }
                let room = ConversationID("room")!
                let ann = UserID("ann")!
                let title = "title \u{0} \u{FFFF} 😀 e\u{301}"
                let created = try await store.createConversation(id: room, title: title, owner: ann)
                #expect(created.title.map { Array($0.utf8) } == Array(title.utf8))
                #expect(try store.conversation(room).title.map { Array($0.utf8) } == Array(title.utf8))

                // The batched path: plain appends, sent together so they
                // share batches (a run written with bytea[] arrays).
                let bodies = Self.texts + [Self.longBody]
                let plain = bodies.enumerated().map { index, body in
                    NewMessage(sender: Self.texts[index % Self.texts.count], body: body,
                               clientID: "k\u{0}\(index) \(Self.texts[index % Self.texts.count])")
                }
                let batched = try await withThrowingTaskGroup(of: (Int, Message).self) { group in
                    for (index, new) in plain.enumerated() {
                        group.addTask { (index, try await store.append(new, to: room).message) }
                    }
                    var answers = [Message?](repeating: nil, count: plain.count)
                    for try await (index, message) in group { answers[index] = message }
                    return answers.compactMap { $0 }
                }
                #expect(batched.map(Self.bytes) == plain.map(Self.bytes))

                // The one-by-one path: a reply_to append is its own statement.
                var replies: [Message] = []
                let replied = bodies.enumerated().map { index, body in
                    NewMessage(sender: Self.texts[(index + 1) % Self.texts.count], body: body,
                               clientID: "r\u{0}\(index)", replyTo: batched[0].id)
                }
                for new in replied {
                    replies.append(try await store.append(new, to: room).message)
                }
                #expect(replies.map(Self.bytes) == replied.map(Self.bytes))

                // Retries find the stored client_id and fingerprint by those bytes.
                for (new, stored) in zip(plain + replied, batched + replies) {
                    guard case .existing(let again) = try await store.append(new, to: room) else {
                        Issue.record("a retry of \(stored.id) was stored again")
                        continue
                    }
                    #expect(again.id == stored.id && Self.bytes(again) == Self.bytes(stored))
                }
                let changedBody = NewMessage(sender: plain[0].sender, body: plain[0].body + "\u{0}", clientID: plain[0].clientID)
                await #expect(throws: StoreError.clientIDConflict(clientID: plain[0].clientID!)) {
                    try await store.append(changedBody, to: room)
                }

                // Edits, including to the largest body.
                let edited = try await store.edit(messageID: batched[1].id, in: room, body: Self.longBody)
                #expect(Array(edited.body.utf8) == Array(Self.longBody.utf8))
                let reEdited = try await store.edit(messageID: replies[0].id, in: room, body: "\u{0}edited\u{0}")
                #expect(Array(reEdited.body.utf8) == Array("\u{0}edited\u{0}".utf8))

                var expected = batched + replies
                expected[1] = edited
                expected[batched.count] = reEdited
                expected.sort { $0.id < $1.id }

                // Page, single message, change feed.
                let page = try store.page(of: room, PageQuery(cursor: .after(0), limit: 200))
                #expect(page.messages.map(\.id) == expected.map(\.id))
                #expect(page.messages.map(Self.bytes) == expected.map(Self.bytes))
                for message in expected {
                    #expect(Self.bytes(try store.message(message.id, in: room)) == Self.bytes(message))
                }
                let feed = try store.changes(in: room, ChangeQuery(since: 0, limit: 1000))
                let byID = Dictionary(uniqueKeysWithValues: feed.events.map { ($0.message.id, $0.message) })
                #expect(byID.count == expected.count)
                for message in expected {
                    #expect(byID[message.id].map(Self.bytes) == Self.bytes(message))
                }

                // The inbox: its title, the last message, and the unread
                // count that skips what the reader sent (sender compared
                // to the user id as bytes).
                let newest = try #require(expected.last)
                let inbox = try store.inbox(of: ann, InboxQuery())
                let row = try #require(inbox.rows.first)
                #expect(row.conversation.title.map { Array($0.utf8) } == Array(title.utf8))
                #expect(row.lastMessage.map(Self.bytes) == Self.bytes(newest))
                #expect(row.read.unreadCount == expected.count)
                _ = try await store.append(NewMessage(sender: "ann", body: "mine\u{0}"), to: room)
                #expect(try store.inbox(of: ann, InboxQuery()).rows.first?.read.unreadCount == expected.count)

                // Stored as those bytes, not merely read back the same.
                let connection = try PGConnection(uri: uri)
                for message in expected {
                    let stored = try connection.query("SELECT sender, body, client_id FROM messages WHERE id = $1",
                                                      [.int64(message.id)])
                    #expect([stored.bytes(0, 0), stored.bytes(0, 1), stored.bytes(0, 2)] == Self.bytes(message))
                }
                let storedTitle = try connection.query("SELECT title FROM conversations WHERE id = 'room'")
                #expect(storedTitle.bytes(0, 0) == Array(title.utf8))
            }
        }

        @Test(.timeLimit(.minutes(1)))
        func bulkAppendKeepsTheBytes() async throws {
            try await withTestDatabase { uri in
                let store = try Self.open(uri)
                defer { store.close() }
                let room = ConversationID("bulk")!
                _ = try await store.createConversation(id: room)
                let loaded = (Self.texts + [Self.longBody]).enumerated().map { index, body in
                    NewMessage(sender: Self.texts[index % Self.texts.count], body: body, clientID: "b\u{0}\(index)")
                }
                let ids = try #require(try store.bulkAppend(loaded, to: room))
                #expect(ids.count == loaded.count)
                let page = try store.page(of: room, PageQuery(cursor: .after(0), limit: 200))
                #expect(page.messages.map(Self.bytes) == loaded.map(Self.bytes))
                // A client_id holding a NUL is found again: loading it twice is refused.
                #expect(throws: StoreError.clientIDConflict(clientID: loaded[0].clientID!)) {
                    try store.bulkAppend([loaded[0]], to: room)
                }
            }
        }
    }
}
