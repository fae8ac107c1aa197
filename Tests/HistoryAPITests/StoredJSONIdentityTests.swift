import Foundation
import HistoryStore
import HistoryTestSupport
import HTTPCore
import Testing
@testable import HistoryAPI
@testable import HistorySQLite

/// The SQLite store keeps each message's JSON from `"sender"` on beside its
/// row (`MessageJSONTail`, migrations/0008) and a page copies it. These
/// tests hold those bytes to the ones `JSONWriter` writes from the columns,
/// so a client sees the same bytes for a message whichever way it was read:
/// from the store's writes (append, edit, delete, bulk load), from the fill
/// at open, and from the encoder alone over every escape and edge value.
@Suite("Stored message JSON")
struct StoredJSONIdentityTests {
    static let conversation = ConversationID("stored-json")!

    /// Every control character, both characters JSON escapes by name, the
    /// byte after the controls, and text of two, three and four bytes.
    static let trickyBodies: [String] = [
        " ", "plain words", "he said \"hi\" \\ back\\", "line\nbreak\r\nand\ttab",
        String((0..<32).map { Character(Unicode.Scalar(UInt8($0))) }), "\u{7F}del",
        "é, 中文, 😀, \u{2028}\u{2029}, \u{FEFF}", "\u{0}nul at the start", String(repeating: "x\u{8}", count: 300),
    ]

    // MARK: - Through the store

    @Test func everyWriteStoresTheBytesThePageWriterWritesFromTheColumns() async throws {
        try await withTemporaryDirectory { directory in
            let configuration = SQLiteStoreConfiguration(path: directory.databasePath, durability: .normal)
            var answered: [Message] = []
            do {
                let store = try SQLiteHistoryStore(configuration: configuration)
                defer { store.close() }
                _ = try await store.createConversation(id: Self.conversation)
                for (index, body) in Self.trickyBodies.enumerated() {
                    let new = NewMessage(sender: index % 2 == 0 ? "ana" : "b\u{E9}la \"q\"", body: body,
                                         clientID: index % 3 == 0 ? "client-\(index)\t\"x\"" : nil,
                                         replyTo: answered.last?.id)
                    answered.append(try await store.append(new, to: Self.conversation).message)
                }
                // Bulk-loaded rows take the same path as the seeding tool's.
                let loaded = try #require(try store.bulkLoad(Self.trickyBodies.map { NewMessage(sender: "c", body: $0) },
                                                             to: Self.conversation))
                answered += try loaded.map { try store.message($0, in: Self.conversation) }
                let edited = try await store.edit(messageID: answered[2].id, in: Self.conversation, body: "edited \u{1}")
                let deleted = try await store.delete(messageID: answered[4].id, in: Self.conversation)
                answered[2] = edited
                answered[4] = deleted
                #expect(edited.editedAt != nil && deleted.deleted)

                let page = try store.page(of: Self.conversation, PageQuery(limit: 200))
                #expect(page.rows.records.allSatisfy { $0.storedTail != nil }, "every row was read as its stored tail")
                #expect(page.messages == answered, "the tails decode to the values the writes answered")
                let expected = Page(rows: MessageRows(answered, conversationID: Self.conversation),
                                    hasOlder: page.hasOlder, hasNewer: page.hasNewer, version: page.version)
                #expect(JSONWriter.page(page) == JSONWriter.page(expected))
                // Each trim reads the stored bytes' length as the budget's.
                for trim in [PageTrim.keepNewest, .keepOldest] {
                    #expect(JSONWriter.page(page, budget: 2_000, trim: trim) == JSONWriter.page(expected, budget: 2_000, trim: trim))
                }

                // Without its tail a row is read whole, into the same bytes.
                store.withWriterConnection { connection in
                    try? connection.execute(sql: "UPDATE messages SET json_tail = NULL WHERE id % 2 = 0")
                }
                let mixed = try store.page(of: Self.conversation, PageQuery(limit: 200))
                #expect(mixed.rows.records.contains { $0.storedTail == nil })
                #expect(JSONWriter.page(mixed) == JSONWriter.page(expected))
            }

            // Reopening fills the missing tails, with the same bytes.
            let reopened = try SQLiteHistoryStore(configuration: configuration)
            defer { reopened.close() }
            let missing = reopened.withWriterConnection { connection in
                try? connection.scalarInt64(sql: "SELECT count(*) FROM messages WHERE json_tail IS NULL")
            }
            #expect(missing == 0)
            let filled = try reopened.page(of: Self.conversation, PageQuery(limit: 200))
            #expect(filled.rows.records.allSatisfy { $0.storedTail != nil })
            let expected = Page(rows: MessageRows(answered, conversationID: Self.conversation),
                                hasOlder: filled.hasOlder, hasNewer: filled.hasNewer, version: filled.version)
            #expect(JSONWriter.page(filled) == JSONWriter.page(expected))
        }
    }

    /// A file written before migration 0008 has no tails: opening it with
    /// this build migrates and fills every row, and pages read the same.
    @Test func aFileFromBeforeTheColumnIsFilledAtOpen() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.databasePath
            let older = Array(try Migration.bundled().prefix(7))
            let connection = try SQLiteConnection(path: path)
            _ = try SQLiteMigrator(migrations: older).migrate(connection)
            try connection.execute(sql: """
                INSERT INTO conversations (seq, id, created_at, message_count, oldest_id, newest_id, version)
                    VALUES (1, 'old', 0, 2500, 1, 2500, 2500);
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2500)
                INSERT INTO messages (place, sender, body, created_at, created_version, version)
                    SELECT (1 << 36) | i, 'ana', 'old "' || i || '"' || char(10), 1795255200000 + i, i, i FROM n;
                """)
            connection.close()

            let store = try SQLiteHistoryStore(configuration: SQLiteStoreConfiguration(path: path, durability: .normal))
            defer { store.close() }
            let missing = store.withWriterConnection { connection in
                try? connection.scalarInt64(sql: "SELECT count(*) FROM messages WHERE json_tail IS NULL")
            }
            #expect(missing == 0, "more than one batch of the fill ran")
            let page = try store.page(of: ConversationID("old")!, PageQuery(cursor: .before(1_234), limit: 3))
            #expect(page.rows.records.allSatisfy { $0.storedTail != nil })
            #expect(page.messages.map(\.body) == ["old \"1231\"\n", "old \"1232\"\n", "old \"1233\"\n"])
            #expect(page.messages.map(\.createdAt.millisecondsSinceEpoch) == [1_795_255_201_231, 1_795_255_201_232, 1_795_255_201_233])
        }
    }

    /// Over real sockets, on whichever store the server runs: every message
    /// is the same bytes inside its page (SQLite: the stored JSON) as in the
    /// answer of `GET .../messages/{id}` (read from its columns), after
    /// appends with escapes, an edit and a delete.
    @Test func eachMessageIsTheSameBytesInItsPageAsAlone() throws {
        try withRunningServer { (client: HTTPClientConnection) in
            #expect(try client.post("/v1/conversations", #"{"id":"bytes"}"#).status == 201)
            let bodies = [#"quote \" backslash \\ slash /"#,
                          #"tab\tline\nU+0001 \u0001 U+2028 \u2028 emoji 😀 nul \u0000 del \u007f"#, "plain"]
            var ids: [Int] = []
            for (index, body) in bodies.enumerated() {
                let answer = try client.post("/v1/conversations/bytes/messages",
                                             #"{"sender":"b\u00e9la","body":"\#(body)","client_id":"c\#(index)\t"}"#)
                #expect(answer.status == 201)
                let object = try JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any]
                ids.append(try #require(object?["id"] as? Int))
            }
            #expect(try client.patch("/v1/conversations/bytes/messages/\(ids[0])", #"{"body":"edited \u0002"}"#).status == 200)
            #expect(try client.delete("/v1/conversations/bytes/messages/\(ids[1])").status == 200)
            let page = try client.get("/v1/conversations/bytes/messages?limit=10")
            #expect(page.status == 200)
            let pageText = String(decoding: page.body, as: UTF8.self)
            for id in ids {
                let alone = try client.get("/v1/conversations/bytes/messages/\(id)")
                #expect(alone.status == 200)
                let text = String(decoding: alone.body, as: UTF8.self)
                #expect(pageText.contains(text), "message \(id): \(text) is not in \(pageText)")
            }
        }
    }

    /// Pages serve the stored bytes as they are, so a file edited by other
    /// means to hold other bytes there is found by the integrity check.
    @Test func theIntegrityCheckFindsAStoredTailThatIsNotItsColumns() async throws {
        try await withTemporaryStore { store in
            _ = try await store.createConversation(id: Self.conversation)
            for body in ["one", "two", "three"] {
                _ = try await store.append(NewMessage(sender: "ana", body: body), to: Self.conversation)
            }
            #expect(try store.checkIntegrity() == ["ok"])
            store.withWriterConnection { connection in
                try? connection.execute(sql: "UPDATE messages SET body = 'changed' WHERE id = 2")
            }
            let findings = try store.checkIntegrity()
            #expect(findings.count == 1 && findings[0].hasPrefix("message 2 of conversation seq 1:"), "\(findings)")
        }
    }

    // MARK: - The encoder alone

    /// Random fields over every escape, both booleans, absent and present
    /// optionals and times at both ends of what RFC 3339 years hold: the
    /// stored tail is the writer's bytes after the conversation id, and
    /// reads back as the same fields.
    @Test func randomFieldsEncodeAsTheWriterAndDecodeBack() throws {
        var generator = SystemRandomNumberGenerator()
        let alphabet: [Character] = Array("aZ09 \"\\/\n\r\t\u{0}\u{1}\u{8}\u{C}\u{1F}\u{7F}é中😀\u{2028}")
        func text(_ maximum: Int) -> String {
            String((0..<Int.random(in: 0...maximum, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! })
        }
        let range = MessageJSONTail.representable
        let times: [Int64] = [range.lowerBound, range.upperBound, -1, 0, 999, -1001, 1_795_255_200_123]
        func time() -> Timestamp {
            Timestamp(millisecondsSinceEpoch: Bool.random(using: &generator)
                ? times.randomElement(using: &generator)! : Int64.random(in: range, using: &generator))
        }
        for index in 0..<2_000 {
            let message = Message(
                id: Int64(index + 1), conversationID: Self.conversation, sender: "s" + text(8), body: text(40),
                createdAt: time(), editedAt: Bool.random(using: &generator) ? time() : nil,
                deleted: Bool.random(using: &generator),
                replyTo: Bool.random(using: &generator) ? Int64.random(in: 1...Int64.max, using: &generator) : nil,
                clientID: Bool.random(using: &generator) ? "c" + text(8) : nil,
                version: Int64.random(in: 0...Int64.max, using: &generator))
            let tail = try #require(MessageJSONTail.encode(message))
            let whole = String(decoding: JSONWriter.message(message), as: UTF8.self)
            #expect(whole == #"{"id":\#(message.id),"conversation_id":"stored-json","# + tail, "message \(index)")
            var rows = MessageRows(conversationID: Self.conversation)
            var utf8 = Array(tail.utf8)
            utf8.withUnsafeBufferPointer { rows.append(id: message.id, storedTail: $0) }
            #expect(rows.message(at: 0) == message)
            utf8.removeLast()
            #expect(utf8.withUnsafeBufferPointer {
                MessageJSONTail.decode($0, id: message.id, conversationID: Self.conversation)
            } == nil, "a cut tail is not read")
        }
    }

    @Test func aTimeNoRFC3339YearHoldsHasNoTail() {
        let range = MessageJSONTail.representable
        for (created, edited) in [(range.lowerBound - 1, nil), (range.upperBound + 1, nil), (Int64.min, nil),
                                  (0, range.upperBound + 1), (0, Int64.max)] as [(Int64, Int64?)] {
            let message = Message(id: 1, conversationID: Self.conversation, sender: "a", body: "b",
                                  createdAt: Timestamp(millisecondsSinceEpoch: created),
                                  editedAt: edited.map(Timestamp.init(millisecondsSinceEpoch:)),
                                  deleted: false, replyTo: nil, clientID: nil, version: 1)
            #expect(MessageJSONTail.encode(message) == nil, "\(created), \(String(describing: edited))")
        }
    }
}
