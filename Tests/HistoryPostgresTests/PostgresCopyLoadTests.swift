import HistoryPostgres
import HistoryStore
import HistorySQLite
import HistoryTestSupport
import Testing

/// Seeding with COPY (`history-load seed --direct postgres://...`) leaves
/// the rows and counters as appends would: the store reads them back, and
/// the next append takes the next id and version.
@Suite(.postgresCluster) struct PostgresCopyLoadTests {
    private static func messages(_ count: Int, from start: Int = 0) -> [NewMessage] {
        (start..<(start + count)).map { NewMessage(sender: "user\($0 % 7)", body: "message \($0)") }
    }

    @Test func loadedMessagesReadAndAppendAsIfAppended() async throws {
        try await withTestDatabase { uri in
            let store = try PostgresHistoryStore(configuration: PostgresStoreConfiguration(uri: uri, readerCount: 2))
            defer { store.close() }
            _ = try await store.createConversation(id: ConversationID("c")!, title: "seeded")
            _ = try await store.createConversation(id: ConversationID("other")!, title: nil)
            // An id taken before the load: the load's block starts after it.
            let before = try await store.append(NewMessage(sender: "ana", body: "first"), to: ConversationID("other")!).message

            let copy = try PostgresCopyLoad(uri: uri)
            defer { copy.close() }
            let ids = try copy.begin(ConversationID("c")!, count: 2_500)
            #expect(ids == (before.id + 1)...(before.id + 2_500))
            try copy.add(Self.messages(1_000))
            // Replies to earlier ids, text COPY must escape, a client_id.
            try copy.add([
                NewMessage(sender: "bo", body: "tab\there\nnew line \\ backslash \\N nul \u{0}.", replyTo: ids.lowerBound),
                NewMessage(sender: "bo", body: "keyed", clientID: "k-1"),
            ])
            try copy.add(Self.messages(1_498, from: 1_002))
            try copy.finish()

            let conversation = try store.conversation(ConversationID("c")!)
            #expect(conversation.messageCount == 2_500)
            #expect(conversation.oldestID == ids.lowerBound && conversation.newestID == ids.upperBound)
            #expect(conversation.version == 2_500)

            let newest = try store.page(of: ConversationID("c")!, PageQuery(cursor: .newest, limit: 50))
            #expect(newest.messages.map(\.id) == Array((ids.upperBound - 49)...ids.upperBound))
            #expect(newest.hasOlder && !newest.hasNewer && newest.version == 2_500)
            #expect(newest.messages.last?.body == "message 2499" && newest.messages.last?.version == 2_500)

            let oldest = try store.page(of: ConversationID("c")!, PageQuery(cursor: .after(0), limit: 200))
            #expect(oldest.messages.map(\.id) == Array(ids.lowerBound..<(ids.lowerBound + 200)))
            #expect(!oldest.hasOlder && oldest.hasNewer)
            let escaped = try store.message(ids.lowerBound + 1_000, in: ConversationID("c")!)
            #expect(escaped.body == "tab\there\nnew line \\ backslash \\N nul \u{0}." && escaped.replyTo == ids.lowerBound)
            #expect(escaped.version == 1_001 && !escaped.deleted && escaped.editedAt == nil)
            let keyed = try store.message(ids.lowerBound + 1_001, in: ConversationID("c")!)
            #expect(keyed.clientID == "k-1" && keyed.body == "keyed")

            // Appends after seeding: the next id and version; a retry of the
            // seeded client_id is recognised.
            let next = try await store.append(NewMessage(sender: "ana", body: "after"), to: ConversationID("c")!)
            #expect(next == .created(next.message) && next.message.id == ids.upperBound + 1 && next.message.version == 2_501)
            let retry = try await store.append(NewMessage(sender: "bo", body: "keyed", clientID: "k-1"), to: ConversationID("c")!)
            #expect(retry == .existing(keyed))
            let other = try await store.append(NewMessage(sender: "ana", body: "second"), to: ConversationID("other")!)
            #expect(other.message.id == ids.upperBound + 2 && other.message.version == 2)
            #expect(try store.conversation(ConversationID("c")!).messageCount == 2_501)
        }
    }

    @Test func aRefusedLoadWritesNothing() async throws {
        try await withTestDatabase { uri in
            let store = try PostgresHistoryStore(configuration: PostgresStoreConfiguration(uri: uri, readerCount: 2))
            defer { store.close() }
            _ = try await store.createConversation(id: ConversationID("c")!, title: nil)
            let copy = try PostgresCopyLoad(uri: uri)
            defer { copy.close() }
            #expect(throws: StoreError.conversationNotFound(ConversationID("nowhere")!)) {
                try copy.begin(ConversationID("nowhere")!, count: 1)
            }
            // The same client_id twice: the unique index refuses the COPY.
            _ = try copy.begin(ConversationID("c")!, count: 2)
            try copy.add([NewMessage(sender: "a", body: "x", clientID: "same"), NewMessage(sender: "a", body: "y", clientID: "same")])
            #expect(throws: StoreError.self) { try copy.finish() }
            let untouched = try store.conversation(ConversationID("c")!)
            #expect(untouched.messageCount == 0 && untouched.newestID == nil && untouched.version == 0)

            // The session is usable again, and the store appends after the load.
            let ids = try copy.begin(ConversationID("c")!, count: 3)
            try copy.add(Self.messages(3))
            try copy.finish()
            #expect(try store.page(of: ConversationID("c")!, PageQuery()).messages.map(\.id) == Array(ids))
            let next = try await store.append(NewMessage(sender: "ana", body: "after"), to: ConversationID("c")!).message
            #expect(next.id == ids.upperBound + 1 && next.version == 4)
        }
    }

    /// The backend feed lists every loaded message once, in id order, with
    /// no hole in its activity values, then the appends after the load: a
    /// load that moved the counter without writing the change log left the
    /// feed nothing to list for a seeded database.
    @Test func loadedMessagesAreInTheBackendFeed() async throws {
        try await withTestDatabase { uri in
            let store = try PostgresHistoryStore(configuration: PostgresStoreConfiguration(uri: uri, readerCount: 2))
            defer { store.close() }
            let c = ConversationID("c")!
            _ = try await store.createConversation(id: c, title: nil)
            let start = try store.serverChanges(ServerChangeQuery(since: 0, limit: 1000)).activity

            let copy = try PostgresCopyLoad(uri: uri)
            defer { copy.close() }
            let copied = try copy.begin(c, count: 300)
            try copy.add(Self.messages(300))
            try copy.finish()
            let bulk = try #require(try store.bulkAppend(Self.messages(40, from: 300), to: c))
            let appended = try await store.append(NewMessage(sender: "ana", body: "after"), to: c).message

            var events: [ServerChangeEvent] = []
            var since = start
            while true {
                let feed = try store.serverChanges(ServerChangeQuery(since: since, limit: 100))
                events += feed.events
                since = feed.activity
                if !feed.hasMore { break }
            }
            #expect(events.map(\.activity) == Array((start + 1)...(start + 341)))
            #expect(events.allSatisfy { $0.kind == .created && $0.conversationID == c })
            let ids = events.map { event -> Int64? in
                if case .message(let message) = event.subject { message.id } else { nil }
            }
            #expect(ids == (Array(copied) + Array(bulk) + [appended.id]).map(Optional.some))
            #expect(since == start + 341)
        }
    }
}
