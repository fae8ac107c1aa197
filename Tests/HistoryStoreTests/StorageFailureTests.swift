import CSQLite
import HistoryTestSupport
import Testing
@testable import HistoryStore
@testable import HistorySQLite

/// What the store does when SQLite itself fails a write: here the file may
/// not grow (`max_page_count`), as on a full disk. The failing append must be
/// answered `.storage` and leave nothing behind, the answered ones must stay,
/// no id may be given twice, and the store must work again once there is room.
@Suite("Storage failures")
struct StorageFailureTests {
    @Test func aFullFileFailsTheAppendCleanlyAndTheStoreRecovers() async throws {
        try await withTemporaryStore(durability: .full) { store in
            try await store.make("c")
            try await store.post(5, to: "c")
            // Let the file grow by no page at all from here on.
            let pages = store.withWriterConnection { connection in
                (try? connection.scalarInt64(sql: "PRAGMA page_count")) ?? nil
            }
            let limit = try #require(pages)
            _ = store.withWriterConnection { connection in
                (try? connection.scalarInt64(sql: "PRAGMA max_page_count = \(limit)")) ?? nil
            }

            // Big bodies need new pages soon; every answer is a message or `.storage`.
            let body = String(repeating: "x", count: MessageRules.maximumBodyBytes)
            var stored: [Message] = []
            var failure: StoreError?
            for _ in 0..<50 {
                do {
                    stored.append(try await store.append(NewMessage(sender: "s", body: body), to: cid("c")).message)
                } catch {
                    failure = error as? StoreError
                    break
                }
            }
            guard case .storage(let storage)? = failure else {
                Issue.record("expected a storage failure, got \(String(describing: failure))")
                return
            }
            #expect(storage.isFull && Int32(storage.code)! & 0xFF == SQLITE_FULL)

            // Nothing half-written: the counters and the rows agree with the answers.
            let conversation = try store.conversation(cid("c"))
            #expect(conversation.messageCount == Int64(5 + stored.count))
            #expect(try store.allIDs(of: "c").count == 5 + stored.count)
            #expect(try store.checkIntegrity() == ["ok"])

            // Room again: appends work, and the failed append's id is never reused.
            _ = store.withWriterConnection { connection in
                (try? connection.scalarInt64(sql: "PRAGMA max_page_count = 1073741823")) ?? nil
            }
            let after = try await store.append(NewMessage(sender: "s", body: body), to: cid("c")).message
            let before = try #require(try store.allIDs(of: "c").dropLast().last)
            #expect(after.id > before)
            #expect(try store.conversation(cid("c")).messageCount == Int64(6 + stored.count))
            #expect(try store.message(after.id, in: cid("c")).body == body)
        }
    }
}
