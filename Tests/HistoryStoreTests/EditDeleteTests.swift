import HistoryTestSupport
import Testing
@testable import HistoryStore

@Suite("Edits and deletes", .postgresCluster)
struct EditDeleteTests {
    @Test(arguments: StoreBackend.allCases) func editReplacesTheBodyAndBumpsTheVersion(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("c")
            let original = try await store.post(2, to: "c")[0]
            let edited = try await store.edit(messageID: original.id, in: cid("c"), body: "fixed typo")
            #expect(edited.body == "fixed typo")
            #expect(edited.editedAt != nil)
            #expect(edited.version == 3)
            #expect(edited.id == original.id && edited.createdAt == original.createdAt && edited.sender == original.sender)
            #expect(try store.message(original.id, in: cid("c")) == edited)
            #expect(try store.conversation(cid("c")).version == 3)
        }
    }

    @Test(arguments: StoreBackend.allCases) func editErrors(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("a")
            try await store.make("b")
            let message = try await store.post(1, to: "a")[0]
            await #expect(throws: StoreError.messageNotFound(cid("a"), messageID: 424_242)) {
                try await store.edit(messageID: 424_242, in: cid("a"), body: "x")
            }
            await #expect(throws: StoreError.messageNotFound(cid("b"), messageID: message.id)) {
                try await store.edit(messageID: message.id, in: cid("b"), body: "x")
            }
            await #expect(throws: StoreError.messageNotFound(cid("a"), messageID: 0)) {
                try await store.edit(messageID: 0, in: cid("a"), body: "x")
            }
            await #expect(throws: StoreError.conversationNotFound(cid("ghost"))) {
                try await store.edit(messageID: message.id, in: cid("ghost"), body: "x")
            }
            await #expect(throws: StoreError.self) {
                try await store.edit(messageID: message.id, in: cid("a"), body: "")
            }
            await #expect(throws: StoreError.self) {
                try await store.edit(messageID: message.id, in: cid("a"), body: String(repeating: "x", count: 16 * 1024 + 1))
            }
            #expect(try store.message(message.id, in: cid("a")) == message)
            #expect(try store.conversation(cid("a")).version == 1)
        }
    }

    @Test(arguments: StoreBackend.allCases) func deleteLeavesATombstoneInPlace(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("c")
            let posted = try await store.post(3, to: "c")
            let tombstone = try await store.delete(messageID: posted[1].id, in: cid("c"))
            #expect(tombstone.deleted)
            #expect(tombstone.body == "")
            #expect(tombstone.id == posted[1].id)
            #expect(tombstone.sender == posted[1].sender)
            #expect(tombstone.version == 4)
            let page = try store.page(of: cid("c"), PageQuery())
            #expect(page.messages.map(\.id) == posted.map(\.id))
            #expect(page.messages[1] == tombstone)
            #expect(try store.conversation(cid("c")).messageCount == 3)
        }
    }

    @Test(arguments: StoreBackend.allCases) func deletingATombstoneAgainChangesNothing(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("c")
            let message = try await store.post(1, to: "c")[0]
            let first = try await store.delete(messageID: message.id, in: cid("c"))
            let second = try await store.delete(messageID: message.id, in: cid("c"))
            #expect(second == first)
            #expect(try store.conversation(cid("c")).version == 2)
        }
    }

    @Test(arguments: StoreBackend.allCases) func editingATombstoneIsRefused(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("c")
            let message = try await store.post(1, to: "c")[0]
            _ = try await store.delete(messageID: message.id, in: cid("c"))
            await #expect(throws: StoreError.messageDeleted(messageID: message.id)) {
                try await store.edit(messageID: message.id, in: cid("c"), body: "resurrect")
            }
            #expect(try store.message(message.id, in: cid("c")).body == "")
        }
    }

    @Test(arguments: StoreBackend.allCases) func deleteErrors(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("a")
            try await store.make("b")
            let message = try await store.post(1, to: "a")[0]
            await #expect(throws: StoreError.messageNotFound(cid("b"), messageID: message.id)) {
                try await store.delete(messageID: message.id, in: cid("b"))
            }
            await #expect(throws: StoreError.messageNotFound(cid("a"), messageID: -1)) {
                try await store.delete(messageID: -1, in: cid("a"))
            }
            await #expect(throws: StoreError.conversationNotFound(cid("ghost"))) {
                try await store.delete(messageID: message.id, in: cid("ghost"))
            }
            #expect(try store.message(message.id, in: cid("a")).deleted == false)
        }
    }

    @Test(arguments: StoreBackend.allCases) func messageReadErrors(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("a")
            #expect(throws: StoreError.messageNotFound(cid("a"), messageID: 5)) { try store.message(5, in: cid("a")) }
            #expect(throws: StoreError.conversationNotFound(cid("zz"))) { try store.message(5, in: cid("zz")) }
        }
    }
}
