import Foundation
import HistoryPostgres
import HistoryStore
import HistorySQLite
import HistoryTestSupport
import Testing
@testable import HistoryLoad

/// `seed --direct postgres://...` (COPY) and the cross-instance delivery of
/// `run --writer-url` / `bench --writer-url`, on the suite's throwaway cluster.
@Suite(.postgresCluster, .serialized)
struct PostgresSeedTests {
    /// One seed, two stores: the same conversations, ids, bodies, replies,
    /// edits, deletes and counters, so benchmarks of the two compare.
    @Test func seedingPostgreSQLGivesTheSQLiteDataset() async throws {
        try await withTestDatabase { uri in
            try await withTemporaryDirectory { directory in
                // load-0000 takes 40%: three chunks, so replies to earlier chunks.
                let plan = SeedPlan(conversations: 12, messages: 30_000, seed: 7, prefix: "load-")
                let onSQLite = try DirectSeeder.seed(plan, path: directory.databasePath,
                                                     progress: SeedProgress(total: plan.messages, enabled: false))
                let onPostgres = try DirectSeeder.seed(plan, path: uri, progress: SeedProgress(total: plan.messages, enabled: false))
                #expect(onPostgres.messages == 30_000 && onPostgres.conversationsCreated == 12 && onPostgres.failures.isEmpty)
                #expect(onPostgres.messages == onSQLite.messages && onPostgres.replies == onSQLite.replies)
                #expect(onPostgres.edits == onSQLite.edits && onPostgres.deletes == onSQLite.deletes)
                #expect(onPostgres.edits > 0 && onPostgres.deletes > 0 && onPostgres.replies > 0)

                let sqlite = try SQLiteHistoryStore(configuration: SQLiteStoreConfiguration(path: directory.databasePath))
                defer { sqlite.close() }
                let postgres = try PostgresHistoryStore(configuration: PostgresStoreConfiguration(uri: uri, readerCount: 2))
                defer { postgres.close() }
                for index in 0..<plan.conversations {
                    let id = ConversationID(plan.conversationID(index))!
                    let expected = try sqlite.conversation(id)
                    let seeded = try postgres.conversation(id)
                    #expect([seeded.messageCount, seeded.oldestID, seeded.newestID, seeded.version]
                        == [expected.messageCount, expected.oldestID, expected.newestID, expected.version], "\(id)")
                    #expect(try Self.everyMessage(of: id, in: postgres) == Self.everyMessage(of: id, in: sqlite), "\(id)")
                }
                // Appends go on from the seeded counters on both.
                let largest = ConversationID(plan.conversationID(0))!
                let next = try await postgres.append(NewMessage(sender: "ana", body: "after the seed"), to: largest).message
                let before = try sqlite.conversation(largest)
                #expect(next.id == 30_001 && next.version == before.version + 1)
            }
        }
    }

    /// A post through instance B wakes the long-polls parked on instance A;
    /// the run reads every acked post back through A.
    @Test func tailWritersPostThroughAnotherInstance() async throws {
        try await withTestDatabase { uri in
            let plan = SeedPlan(conversations: 6, messages: 600, seed: 3, prefix: "load-")
            _ = try DirectSeeder.seed(plan, path: uri, progress: SeedProgress(total: plan.messages, enabled: false))
            let parked = try ServerProcess(database: uri)
            defer { parked.stop() }
            let posting = try ServerProcess(database: uri, extraArguments: ["--access-log", "on"])
            defer { posting.stop() }
            var run = quickPlan(parked.endpoint, .tail, clients: 8, seconds: 3)
            run.writers = 2
            run.rate = 20
            run.writerEndpoint = posting.endpoint
            let report = try LoadRun.execute(run)
            #expect(report.violationCount == 0, "\(report.text)")
            #expect(report.errorCount == 0, "\(report.errors)")
            #expect(report.ackedPosts > 0 && report.ackedPostsReadable == report.ackedPosts)
            #expect(report.kinds.contains { $0.kind == RequestKind.delivery.name && $0.count > 0 })
            // The posts went through the other instance.
            #expect(posting.stdoutText.contains("POST /v1/conversations/load-"))
        }
    }

    private struct Row: Equatable, CustomStringConvertible {
        var id: Int64, sender: String, body: String, replyTo: Int64?, deleted: Bool, edited: Bool, version: Int64
        var description: String { "\(id) v\(version)" }
    }

    private static func everyMessage(of conversation: ConversationID, in store: any HistoryStore) throws -> [Row] {
        var rows: [Row] = []
        var after: Int64 = 0
        while true {
            let page = try store.page(of: conversation, PageQuery(cursor: .after(after), limit: 200))
            rows += page.messages.map {
                Row(id: $0.id, sender: $0.sender, body: $0.body, replyTo: $0.replyTo, deleted: $0.deleted,
                    edited: $0.editedAt != nil, version: $0.version)
            }
            guard page.hasNewer, let last = page.messages.last else { return rows }
            after = last.id
        }
    }
}
