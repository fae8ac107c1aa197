import Foundation
import HistoryTestSupport
import Testing
@testable import HistoryStore
@testable import HistorySQLite

/// What a delete or an edit removes must be gone from the database file
/// itself, not only from the answers: a tombstone that kept its text on
/// disk would keep what the user deleted.
@Suite("Erasure")
struct ErasureTests {
    @Test func deletedAndEditedTextIsGoneFromTheFileAfterACheckpoint() async throws {
        try await withTemporaryStore(durability: .full) { store in
            try await store.make("c")
            let deletedText = "deleted-\(UUID().uuidString)"
            let editedText = "edited-away-\(UUID().uuidString)"
            let keptText = "kept-\(UUID().uuidString)"
            let deleted = try await store.append(NewMessage(sender: "ana", body: deletedText), to: cid("c")).message
            let edited = try await store.append(NewMessage(sender: "ana", body: editedText), to: cid("c")).message
            try await store.append(NewMessage(sender: "ana", body: keptText), to: cid("c"))
            let path = store.configuration.path

            // Control: once checkpointed, every text is in the main file.
            try checkpoint(store)
            let before = try Data(contentsOf: URL(fileURLWithPath: path))
            for text in [deletedText, editedText, keptText] {
                #expect(before.range(of: Data(text.utf8)) != nil, "\(text) was never in the file")
            }

            _ = try await store.delete(messageID: deleted.id, in: cid("c"))
            _ = try await store.edit(messageID: edited.id, in: cid("c"), body: "fixed")
            try checkpoint(store)
            let after = try Data(contentsOf: URL(fileURLWithPath: path))
            #expect(after.range(of: Data(deletedText.utf8)) == nil, "a tombstone's text is still in the file")
            #expect(after.range(of: Data(editedText.utf8)) == nil, "an edited message's old text is still in the file")
            #expect(after.range(of: Data(keptText.utf8)) != nil)
            #expect(try store.checkIntegrity() == ["ok"])
        }
    }

    /// Copies the WAL into the main file and empties it; fails unless all of it was copied.
    private func checkpoint(_ store: SQLiteHistoryStore) throws {
        let busy = store.withWriterConnection { connection in
            (try? connection.scalarInt64(sql: "PRAGMA wal_checkpoint(TRUNCATE)")) ?? nil
        }
        try #require(busy == 0, "the checkpoint could not copy everything")
    }
}
