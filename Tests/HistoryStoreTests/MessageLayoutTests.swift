import CSQLite
import Foundation
import HistoryTestSupport
import Testing
@testable import HistoryStore
@testable import HistorySQLite

/// Migration 0002 keys messages by one integer, `place` = seq << 36 | id
/// (`MessagePlace`). These tests hold what that layout must keep: data from
/// the old layout carried over whole, cursors and ids past its range never
/// reaching a neighbouring conversation, and its limits refused as a full
/// store rather than a corrupt one.
@Suite("Message layout")
struct MessageLayoutTests {
    /// A database at 0001 (the WITHOUT ROWID table) with rows written there,
    /// then opened by today's store: every row, counter and client id is kept.
    @Test func aDatabaseOfTheFirstLayoutIsCarriedOverWhole() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.databasePath
            try makeFirstLayoutDatabase(at: path, rows: """
                INSERT INTO conversations (seq, id, title, created_at, message_count, oldest_id, newest_id, version)
                VALUES (1, 'a', 'A', 1000, 3, 1, 5, 5), (2, 'b', NULL, 2000, 2, 2, 4, 2);
                INSERT INTO messages (conversation_seq, id, sender, body, created_at, edited_at, deleted, reply_to,
                                      client_id, client_fingerprint, created_version, version)
                VALUES (1, 1, 'ana', 'one', 1001, 1500, 0, NULL, 'k1', \(ClientFingerprint.of(sender: "ana", body: "first")), 1, 5),
                       (1, 3, 'bo', '', 1003, NULL, 1, 1, NULL, NULL, 2, 4),
                       (1, 5, 'ana', 'five', 1005, NULL, 0, NULL, NULL, NULL, 3, 3),
                       (2, 2, 'cy', 'two', 2002, NULL, 0, NULL, NULL, NULL, 1, 1),
                       (2, 4, 'cy', 'four', 2004, NULL, 0, 2, NULL, NULL, 2, 2);
                """)
            let store = try SQLiteHistoryStore(configuration: SQLiteStoreConfiguration(path: path, durability: .normal))
            defer { store.close() }
            #expect(try queryStrings(path, "SELECT version FROM schema_migrations ORDER BY version")
                == Migration.bundled().map { String($0.version) })
            #expect(try store.checkIntegrity() == ["ok"])

            let a = try store.page(of: cid("a"), PageQuery())
            #expect(a.messages.map(\.id) == [1, 3, 5])
            #expect(a.messages.map(\.body) == ["one", "", "five"])
            #expect(a.messages[0].editedAt == Timestamp(millisecondsSinceEpoch: 1500) && a.messages[0].clientID == "k1")
            #expect(a.messages[1].deleted && a.messages[1].replyTo == 1)
            #expect(a.version == 5 && !a.hasOlder && !a.hasNewer)
            #expect(try store.page(of: cid("b"), PageQuery()).messages.map(\.id) == [2, 4])
            #expect(try store.page(of: cid("b"), PageQuery(cursor: .before(4))).messages.map(\.id) == [2])
            let feed = try store.changes(in: cid("a"), ChangeQuery(since: 1))
            #expect(feed.events.map(\.message.id) == [5, 3, 1] && feed.events.map(\.kind) == [.created, .created, .edited])

            // The client id still answers its retry (the fingerprint came along),
            // and new ids continue after the largest old one.
            let retry = try await store.append(NewMessage(sender: "ana", body: "first", clientID: "k1"), to: cid("a"))
            #expect(retry == .existing(try store.message(1, in: cid("a"))))
            let next = try await store.append(NewMessage(sender: "ana", body: "six"), to: cid("a")).message
            #expect(next.id == 6)
            #expect(try store.conversation(cid("a")).messageCount == 4)
        }
    }

    /// An old database whose ids the layout cannot hold is refused, and left
    /// as it was: nothing of 0002 applied.
    @Test func aDatabaseWithIdsPastTheLayoutIsRefusedUntouched() async throws {
        try withTemporaryDirectory { directory in
            let path = directory.databasePath
            try makeFirstLayoutDatabase(at: path, rows: """
                INSERT INTO conversations (seq, id, created_at) VALUES (1, 'a', 0);
                INSERT INTO messages (conversation_seq, id, sender, body, created_at, created_version, version)
                VALUES (1, \(MessagePlace.maximumID + 1), 's', 'b', 0, 1, 1);
                """)
            do {
                _ = try SQLiteHistoryStore(configuration: SQLiteStoreConfiguration(path: path, durability: .normal))
                Issue.record("a database with an id past 2^36 - 1 was migrated")
            } catch {
                guard case .migration(let reason)? = error as? StoreError else { Issue.record("wrong error \(error)"); return }
                #expect(reason.contains("messages_by_place") && reason.contains("ids_below_2_36"), "\(reason)")
            }
            #expect(try queryStrings(path, "SELECT version FROM schema_migrations") == ["1"])
            #expect(try queryStrings(path, "SELECT conversation_seq || ':' || id FROM messages") == ["1:\(MessagePlace.maximumID + 1)"])
        }
    }

    /// Conversation `a` sits right below `b` in the table. Ids and cursors
    /// past 2^36 - 1 in `a` must read as "above everything of a", never as
    /// one of b's messages (seq << 36 | id would alias them).
    @Test func cursorsAndIdsPastTheLayoutNeverReachTheNextConversation() async throws {
        try await withTemporaryStore { store in
            try await store.make("a")
            try await store.make("b")
            let inA = try await store.post(3, to: "a").map(\.id)
            let inB = try await store.post(3, to: "b").map(\.id)
            let alias = (1 << MessagePlace.idBits) + inB[0]  // a's seq << 36 | alias == b's first place
            for cursor in [MessagePlace.maximumID, MessagePlace.maximumID + 1, alias, Int64.max] {
                #expect(try store.page(of: cid("a"), PageQuery(cursor: .after(cursor))).messages.isEmpty, "after \(cursor)")
                let below = try store.page(of: cid("a"), PageQuery(cursor: .before(cursor)))
                #expect(below.messages.map(\.id) == inA && !below.hasNewer, "before \(cursor)")
                let around = try store.page(of: cid("a"), PageQuery(cursor: .around(cursor)))
                #expect(around.messages.map(\.id) == inA && around.anchor?.found == false, "around \(cursor)")
                let between = try store.page(of: cid("a"), PageQuery(cursor: .between(after: inA[0], before: cursor)))
                #expect(between.messages.map(\.id) == Array(inA.dropFirst()), "between \(inA[0]) and \(cursor)")
                let window = try store.page(of: cid("a"), PageQuery(cursor: .after(cursor), window: 1))
                #expect(window.messages.isEmpty && window.reset == false, "window after \(cursor)")
            }
            #expect(throws: StoreError.messageNotFound(cid("a"), messageID: alias)) { try store.message(alias, in: cid("a")) }
            await #expect(throws: StoreError.messageNotFound(cid("a"), messageID: alias)) {
                try await store.edit(messageID: alias, in: cid("a"), body: "x")
            }
            await #expect(throws: StoreError.messageNotFound(cid("a"), messageID: alias)) {
                try await store.delete(messageID: alias, in: cid("a"))
            }
            await #expect(throws: StoreError.replyTargetNotFound(messageID: alias)) {
                try await store.append(NewMessage(sender: "s", body: "x", replyTo: alias), to: cid("a"))
            }
            // b is untouched.
            #expect(try store.page(of: cid("b"), PageQuery()).messages.map(\.body) == ["message 0", "message 1", "message 2"])
            #expect(try store.conversation(cid("b")).version == 3)
        }
    }

    /// The last id the layout holds is given; the next append is refused
    /// as a full store (507 over HTTP) and writes nothing; reads go on.
    @Test func idsPastTheLayoutAreAFullStore() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.databasePath
            let configuration = SQLiteStoreConfiguration(path: path, durability: .normal)
            do {
                let store = try SQLiteHistoryStore(configuration: configuration)
                defer { store.close() }
                try await store.make("a")
                try await store.make("b")
                // Move the id counter to the layout's end: one message stored at its last id but one.
                let written = store.withWriterConnection { connection in
                    (try? connection.execute(sql: """
                        INSERT INTO messages (place, sender, body, created_at, created_version, version)
                        VALUES (\(MessagePlace.of(seq: 2, id: MessagePlace.maximumID - 1)), 's', 'b', 0, 1, 1);
                        UPDATE conversations SET message_count = 1, oldest_id = \(MessagePlace.maximumID - 1),
                            newest_id = \(MessagePlace.maximumID - 1), version = 1 WHERE seq = 2;
                        """)) != nil
                }
                try #require(written)
            }
            let store = try SQLiteHistoryStore(configuration: configuration)
            defer { store.close() }
            let last = try await store.append(NewMessage(sender: "s", body: "last"), to: cid("a")).message
            #expect(last.id == MessagePlace.maximumID)
            #expect(try store.page(of: cid("a"), PageQuery(cursor: .before(Int64.max))).messages.map(\.id) == [last.id])
            do {
                _ = try await store.append(NewMessage(sender: "s", body: "one too many"), to: cid("a"))
                Issue.record("an id past 2^36 - 1 was given")
            } catch {
                #expect((error as? StoreError)?.isStorageFull == true, "\(error)")
                #expect((error as? StoreError).map(Self.isIDSpaceExhausted) == true, "\(error)")
            }
            let bulkError = #expect(throws: StoreError.self) { try store.bulkAppend([NewMessage(sender: "s", body: "x")], to: cid("a")) }
            #expect(bulkError.map(Self.isIDSpaceExhausted) == true)
            #expect(try store.conversation(cid("a")).messageCount == 1)
            #expect(try store.page(of: cid("b"), PageQuery()).messages.map(\.id) == [MessagePlace.maximumID - 1])
            #expect(try store.checkIntegrity() == ["ok"])
        }
    }

    /// Past the last conversation seq the layout holds, creating one more is
    /// a full store, and nothing is written.
    @Test func conversationsPastTheLayoutAreAFullStore() async throws {
        try await withTemporaryStore { store in
            try await store.make("a")
            let written = store.withWriterConnection { connection in
                (try? connection.execute(sql: """
                    INSERT INTO conversations (seq, id, created_at) VALUES (\(MessagePlace.maximumSeq), 'last', 0)
                    """)) != nil
            }
            try #require(written)
            let last = try store.page(of: cid("last"), PageQuery())
            #expect(last.messages.isEmpty)
            let posted = try await store.append(NewMessage(sender: "s", body: "at the end"), to: cid("last")).message
            #expect(try store.page(of: cid("last"), PageQuery(cursor: .before(Int64.max))).messages == [posted])
            do {
                _ = try await store.make("one-too-many")
                Issue.record("a seq past the layout was given")
            } catch {
                #expect((error as? StoreError)?.isStorageFull == true, "\(error)")
                #expect((error as? StoreError).map(Self.isIDSpaceExhausted) == true, "\(error)")
            }
            #expect(throws: StoreError.conversationNotFound(cid("one-too-many"))) { try store.conversation(cid("one-too-many")) }
            #expect(try store.checkIntegrity() == ["ok"])
        }
    }

    /// The layout's limits are their own error, not a SQLite failure.
    private static func isIDSpaceExhausted(_ error: StoreError) -> Bool {
        if case .idSpaceExhausted = error { return true }
        return false
    }

    /// A database with only migration 0001 applied (the `WITHOUT ROWID`
    /// layout), holding what `rows` inserts.
    private func makeFirstLayoutDatabase(at path: String, rows: String) throws {
        let first = try #require(try Migration.bundled().first)
        let connection = try SQLiteConnection(path: path)
        defer { connection.close() }
        _ = try SQLiteMigrator(migrations: [first]).migrate(connection)
        try connection.execute(sql: rows)
    }

    @Test func placesOrderByConversationThenId() {
        #expect(MessagePlace.of(seq: 1, id: MessagePlace.maximumID) < MessagePlace.of(seq: 2, id: 1))
        #expect(MessagePlace.lowerBound(seq: 2) == MessagePlace.upperBound(seq: 1))
        #expect(MessagePlace.cursor(seq: 1, id: 0) == MessagePlace.lowerBound(seq: 1))
        #expect(MessagePlace.cursor(seq: 1, id: .max) == MessagePlace.upperBound(seq: 1))
        #expect(MessagePlace.upperBound(seq: MessagePlace.maximumSeq) == Int64.max - MessagePlace.maximumID)
    }
}
