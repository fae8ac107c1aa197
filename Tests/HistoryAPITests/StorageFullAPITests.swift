import Foundation
import HTTPCore
import HistoryAPI
import HistoryTestSupport
import HistoryWiring
import Testing
@testable import HistoryStore
@testable import HistorySQLite

/// A full disk is the operator's problem, not a bug: writes are answered 507
/// `insufficient_storage` (nothing stored), reads keep working, and writes
/// work again once there is room.
@Suite("Storage full over HTTP",
       .enabled(if: StoreBackend.serversUseSQLite,
                "fills the SQLite file with PRAGMA max_page_count; PostgreSQL's full disk is its own server's"))
struct StorageFullAPITests {
    @Test func writesAre507WhileTheFileCannotGrowAndWorkAgainAfter() throws {
        try withRunningServer { server in
            let client = try server.connect()
            defer { client.close() }
            try client.createConversation("full")
            let store = try #require(server.application.store as? SQLiteHistoryStore)
            let limit = try #require(store.withWriterConnection { (try? $0.scalarInt64(sql: "PRAGMA page_count")) ?? nil })
            _ = store.withWriterConnection { (try? $0.scalarInt64(sql: "PRAGMA max_page_count = \(limit)")) ?? nil }

            let body = String(repeating: "x", count: MessageRules.maximumBodyBytes)
            let post = #"{"sender":"ana","body":"\#(body)"}"#
            var created = 0
            var refused: HTTPClientResponse?
            for _ in 0..<50 {
                let response = try client.post("/v1/conversations/full/messages", post)
                if response.status == 201 { created += 1; continue }
                refused = response
                break
            }
            let answer = try #require(refused)
            expectError(answer, 507, "insufficient_storage")
            // Reads still answer, and say exactly what was stored.
            let conversation = try client.get("/v1/conversations/full")
            #expect(conversation.status == 200)
            #expect(conversation.bodyText.contains(#""message_count":\#(created),"#))
            // Room again: the same post is stored.
            _ = store.withWriterConnection { (try? $0.scalarInt64(sql: "PRAGMA max_page_count = 1073741823")) ?? nil }
            #expect(try client.post("/v1/conversations/full/messages", post).status == 201)
        }
    }
}
