import HistoryTestSupport
import Testing
@testable import HistoryStore

@Suite("Conversations", .postgresCluster)
struct ConversationTests {
    @Test(arguments: StoreBackend.allCases) func createWithAGivenIDAndReadItBack(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            let created = try await store.createConversation(id: cid("general"), title: "General")
            #expect(created.id == cid("general"))
            #expect(created.title == "General")
            #expect(created.messageCount == 0)
            #expect(created.oldestID == nil && created.newestID == nil)
            #expect(created.version == 0)
            #expect(try store.conversation(cid("general")) == created)
        }
    }

    @Test(arguments: StoreBackend.allCases) func createWithAGeneratedID(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            let first = try await store.createConversation()
            let second = try await store.createConversation()
            #expect(first.id != second.id)
            #expect(first.id.rawValue.count == 20)
            #expect(first.title == nil)
            #expect(try store.conversation(first.id).id == first.id)
        }
    }

    @Test(arguments: StoreBackend.allCases) func anExistingIDIsRefused(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("dup", title: "first")
            await #expect(throws: StoreError.conversationExists(cid("dup"))) {
                try await store.createConversation(id: cid("dup"), title: "second")
            }
            #expect(try store.conversation(cid("dup")).title == "first")
        }
    }

    @Test(arguments: StoreBackend.allCases) func titleRules(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            let empty = try await store.createConversation(id: cid("empty"), title: "")
            #expect(empty.title == nil)
            #expect(try store.conversation(cid("empty")).title == nil)
            let longest = String(repeating: "é", count: MessageRules.maximumTitleCharacters)
            #expect(try await store.createConversation(id: cid("long"), title: longest).title == longest)
            await #expect(throws: StoreError.self) {
                try await store.createConversation(id: cid("toolong"), title: longest + "x")
            }
            #expect(throws: StoreError.conversationNotFound(cid("toolong"))) {
                try store.conversation(cid("toolong"))
            }
            let heavy = "e" + String(repeating: "\u{301}", count: 5_000)  // one character, 10 KB
            await #expect(throws: StoreError.self) {
                try await store.createConversation(id: cid("heavy"), title: heavy)
            }
        }
    }

    @Test(arguments: StoreBackend.allCases) func unknownConversation(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            #expect(throws: StoreError.conversationNotFound(cid("nope"))) { try store.conversation(cid("nope")) }
        }
    }

    @Test(arguments: StoreBackend.allCases) func countersFollowEveryChange(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("c")
            let posted = try await store.post(3, to: "c")
            var conversation = try store.conversation(cid("c"))
            #expect(conversation.messageCount == 3)
            #expect(conversation.oldestID == posted[0].id)
            #expect(conversation.newestID == posted[2].id)
            #expect(conversation.version == 3)
            _ = try await store.edit(messageID: posted[1].id, in: cid("c"), body: "changed")
            _ = try await store.delete(messageID: posted[0].id, in: cid("c"))
            conversation = try store.conversation(cid("c"))
            // A tombstone is still counted and still the oldest.
            #expect(conversation.messageCount == 3)
            #expect(conversation.oldestID == posted[0].id)
            #expect(conversation.version == 5)
        }
    }
}
