import Foundation
import HistoryPostgres
import HistoryStore
import HistoryTestSupport
import Testing

extension PostgresTests {
    /// Every write kind of `PostgresWriter` against a real server, read back
    /// with plain SQL: the SQLite writer's results and errors.
    @Suite("PostgresWriter")
    struct PostgresWriterTests {
        @Test func conversationsAreCreatedOnceWithTheirOwner() async throws {
            try await withWriter { instance, rows, uri in

                let created = try await instance.create("general", title: "General", owner: "ana").get()
                #expect(created.id.rawValue == "general" && created.title == "General" && created.version == 0)
                #expect(await instance.create("general") == .failure(.conversationExists(ConversationID("general")!)))
                // An empty title is no title; a generated id is 20 characters.
                let generated = try await instance.create(nil, title: "").get()
                #expect(generated.title == nil && generated.id.rawValue.count == 20)

                #expect(try rows.strings("SELECT user_id || ':' || role FROM members") == ["ana:owner"])
                // Three creates took three activity values (the refused one too, as in SQLite).
                #expect(try rows.activity() == 3)
                #expect(try rows.counters("general") == [0, nil, nil, 0, 1])
                #expect(try rows.int64("SELECT activity FROM members WHERE user_id = 'ana'") == 1)
                #expect(try rows.strings("SELECT title FROM conversations ORDER BY seq") == ["General", nil])
            }
        }

        @Test func appendsCountAndAnswerRetriesByClientID() async throws {
            try await withWriter { instance, rows, uri in
                _ = try await instance.create("c").get()

                #expect(await instance.append("hi", to: "nowhere") == .failure(.conversationNotFound(ConversationID("nowhere")!)))
                guard case .created(let first) = try await instance.append("one", to: "c", clientID: "k1").get() else {
                    Issue.record("not created")
                    return
                }
                #expect(first.version == 1 && first.body == "one" && first.clientID == "k1")
                // The same client_id: the same message, nothing stored.
                #expect(try await instance.append("one", to: "c", clientID: "k1").get() == .existing(first))
                #expect(await instance.append("other", to: "c", clientID: "k1") == .failure(.clientIDConflict(clientID: "k1")))
                #expect(await instance.append("one", to: "c", sender: "bo", clientID: "k1")
                    == .failure(.clientIDConflict(clientID: "k1")))
                #expect(await instance.append("re", to: "c", replyTo: 999) == .failure(.replyTargetNotFound(messageID: 999)))
                let reply = try await instance.append("re", to: "c", replyTo: first.id).get().message
                #expect(reply.replyTo == first.id && reply.id > first.id && reply.version == 2)

                #expect(try rows.counters("c") == [2, first.id, reply.id, 2, try rows.activity()])
                #expect(try rows.int64s("SELECT version FROM messages ORDER BY id") == [1, 2])
                #expect(try rows.int64("SELECT client_fingerprint FROM messages WHERE id = $1", [.int64(first.id)])
                    == ClientFingerprint.of(sender: "ana", body: "one"))
            }
        }

        @Test func editsAndDeletesEraseTheText() async throws {
            try await withWriter { instance, rows, uri in
                _ = try await instance.create("c").get()
                let message = try await instance.append("secret", to: "c", clientID: "k").get().message

                let edited = try await instance.edit(message.id, in: "c", body: "changed").get()
                #expect(edited.body == "changed" && edited.editedAt != nil && edited.version == 2)
                #expect(await instance.edit(message.id + 100, in: "c", body: "x")
                    == .failure(.messageNotFound(ConversationID("c")!, messageID: message.id + 100)))
                #expect(await instance.edit(1, in: "nowhere", body: "x") == .failure(.conversationNotFound(ConversationID("nowhere")!)))

                let tombstone = try await instance.delete(message.id, in: "c").get()
                #expect(tombstone.deleted && tombstone.body == "" && tombstone.version == 3)
                // Deleting again answers the tombstone unchanged; editing it is refused.
                #expect(try await instance.delete(message.id, in: "c").get() == tombstone)
                #expect(await instance.edit(message.id, in: "c", body: "x") == .failure(.messageDeleted(messageID: message.id)))
                // The row keeps its id and client_id, not the text nor its fingerprint.
                let row = try rows.connection.query(
                    "SELECT body, client_fingerprint, deleted, client_id, version FROM messages WHERE id = $1", [.int64(message.id)])
                #expect(row.string(0, 0) == "" && row.isNull(0, 1) && row.bool(0, 2) && row.string(0, 3) == "k")
                #expect(row.int64(0, 4) == 3)
                // A retry of the original post, whatever its body, answers the tombstone.
                #expect(try await instance.append("a guess", to: "c", clientID: "k").get() == .existing(tombstone))
                #expect(try rows.counters("c")[0...3] == [1, message.id, message.id, 3])
            }
        }

        @Test func membersAreAddedChangedAndRemoved() async throws {
            try await withWriter { instance, rows, uri in
                _ = try await instance.create("c").get()
                #expect(await instance.put("bo", in: "nowhere") == .failure(.conversationNotFound(ConversationID("nowhere")!)))

                guard case .added(let added) = try await instance.put("bo", in: "c").get() else {
                    Issue.record("not added")
                    return
                }
                #expect(try await instance.put("bo", in: "c").get() == .unchanged(added))
                var owner = added
                owner.role = .owner
                #expect(try await instance.put("bo", .owner, in: "c").get() == .changed(owner))
                let afterChange = try rows.activity()
                #expect(try rows.int64("SELECT activity FROM members WHERE user_id = 'bo'") == afterChange)
                // A member change moves the conversation's activity, not its version.
                #expect(try rows.counters("c") == [0, nil, nil, 0, afterChange])

                #expect(try await instance.remove("bo", from: "c").get() == true)
                #expect(try await instance.remove("bo", from: "c").get() == false)
                #expect(try rows.int64("SELECT activity FROM removed_members WHERE user_id = 'bo'") == afterChange + 1)
                #expect(try rows.int64("SELECT count(*) FROM members") == 0)
                // Joining again forgets the removal.
                #expect(try await instance.put("bo", in: "c").get().member.role == .member)
                #expect(try rows.int64("SELECT count(*) FROM removed_members") == 0)
                #expect(try rows.counters("c")[4] == afterChange + 2)
            }
        }

        @Test func readMarkersMoveForwardOnlyAndStopAtTheNewest() async throws {
            try await withWriter { instance, rows, uri in
                _ = try await instance.create("c", owner: "ana").get()
                #expect(await instance.markRead("bo", in: "c", upTo: 1) == .failure(.memberNotFound(ConversationID("c")!, UserID("bo")!)))
                #expect(await instance.markRead("ana", in: "x", upTo: 1) == .failure(.conversationNotFound(ConversationID("x")!)))
                // No message: the marker stays nil and nothing is written.
                let before = try rows.activity()
                #expect(try await instance.markRead("ana", in: "c", upTo: 5).get()
                    == ReadState(lastReadID: nil, firstUnreadID: nil, unreadCount: 0, unreadCapped: false))
                #expect(try rows.activity() == before)

                var ids: [Int64] = []
                for index in 0..<4 {
                    ids.append(try await instance.append("m\(index)", to: "c", sender: index == 3 ? "ana" : "bo").get().message.id)
                }
                #expect(try await instance.markRead("ana", in: "c", upTo: ids[0]).get()
                    == ReadState(lastReadID: ids[0], firstUnreadID: ids[1], unreadCount: 2, unreadCapped: false))
                // Backwards writes nothing and answers the current state.
                let moved = try rows.activity()
                #expect(try await instance.markRead("ana", in: "c", upTo: 0).get().lastReadID == ids[0])
                #expect(try rows.activity() == moved)
                // Past the newest: clamped to it.
                #expect(try await instance.markRead("ana", in: "c", upTo: Int64.max).get()
                    == ReadState(lastReadID: ids[3], firstUnreadID: nil, unreadCount: 0, unreadCapped: false))
                #expect(try rows.int64("SELECT last_read_id FROM members WHERE user_id = 'ana'") == ids[3])
                #expect(try rows.int64("SELECT activity FROM members WHERE user_id = 'ana'") == moved + 1)
            }
        }

        @Test func aBulkLoadKeepsTheCountersExact() async throws {
            try await withWriter { instance, rows, uri in
                _ = try await instance.create("c").get()
                _ = try await instance.append("first", to: "c", clientID: "used").get()
                let start = try rows.activity()
                let messages = (0..<2_500).map { NewMessage(sender: "s\($0 % 3)", body: "body \"\($0)\" {x}, \\ NULL", clientID: "b\($0)") }
                let ids = try #require(try instance.writer.bulkAppend(messages, to: ConversationID("c")!))
                #expect(ids.count == 2_500)
                #expect(try rows.counters("c")[0...3] == [2_501, ids.lowerBound - 1, ids.upperBound, 2_501])
                #expect(try rows.activity() == start + 2_500)
                #expect(try rows.strings("SELECT body FROM messages WHERE id = $1", [.int64(ids.lowerBound + 7)])
                    == ["body \"7\" {x}, \\ NULL"])
                #expect(try rows.int64s("SELECT version FROM messages ORDER BY id") == Array(1...2_501))
                // A used client_id, a repeated one, a missing reply target: nothing written.
                #expect(throws: StoreError.clientIDConflict(clientID: "used")) {
                    try instance.writer.bulkAppend([NewMessage(sender: "a", body: "b", clientID: "used")], to: ConversationID("c")!)
                }
                #expect(throws: StoreError.clientIDConflict(clientID: "twice")) {
                    try instance.writer.bulkAppend([NewMessage(sender: "a", body: "b", clientID: "twice"),
                                                    NewMessage(sender: "a", body: "b", clientID: "twice")], to: ConversationID("c")!)
                }
                #expect(throws: StoreError.replyTargetNotFound(messageID: 1 << 40)) {
                    try instance.writer.bulkAppend([NewMessage(sender: "a", body: "b", replyTo: 1 << 40)], to: ConversationID("c")!)
                }
                #expect(throws: StoreError.conversationNotFound(ConversationID("none")!)) {
                    try instance.writer.bulkAppend([NewMessage(sender: "a", body: "b")], to: ConversationID("none")!)
                }
                #expect(try rows.counters("c")[0] == 2_501)
                #expect(try instance.writer.bulkAppend([], to: ConversationID("c")!) == nil)
            }
        }

        @Test func afterCloseWritesAreRefused() async throws {
            try await withTestDatabase { uri in
                try WriterInstance.migrate(uri)
                let instance = WriterInstance(uri: uri)
                _ = try await instance.create("c").get()
                instance.close()
                #expect(await instance.append("late", to: "c") == .failure(.closed))
                #expect(throws: StoreError.closed) {
                    try instance.writer.bulkAppend([NewMessage(sender: "a", body: "b")], to: ConversationID("c")!)
                }
            }
        }
    }
}
