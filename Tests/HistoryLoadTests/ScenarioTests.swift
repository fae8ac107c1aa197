import Foundation
import HistoryTestSupport
import Testing
@testable import HistoryLoad

/// Every scenario for about two seconds against the real server: the report
/// must count requests, find no violation, and read back every acked post.
@Suite("Scenarios against history-server", .serialized)
struct ScenarioTests {
    @Test(arguments: [Scenario.scrollback, .deep, .jump, .newest, .short, .post, .tail, .mix, .revalidate])
    func scenarioHoldsItsInvariants(_ scenario: Scenario) throws {
        try withSeededServer { server, _ in
            var plan = quickPlan(server.endpoint, scenario, clients: scenario == .mix ? 6 : 4)
            if scenario == .mix { plan.mix = MixWeights(argument: "scrollback=2,deep=1,jump=1,post=1,tail=1")! }
            let report = try LoadRun.execute(plan)
            #expect(report.requests > 0)
            #expect(report.violationCount == 0, "\(report.text)")
            #expect(report.errorCount == 0, "\(report.errors)")
            #expect(report.kinds.allSatisfy { $0.count > 0 && $0.p50Ms <= $0.p99Ms && $0.p99Ms <= $0.maxMs })
            let checked = report.checks["pages checked", default: 0]
            switch scenario {
            case .post, .tail:
                #expect(report.ackedPosts > 0)
                #expect(report.ackedPostsReadable == report.ackedPosts)
                #expect(report.checks["idempotent retries checked", default: 0] > 0 || report.ackedPosts < 25)
                if scenario == .tail {
                    #expect(report.kinds.contains { $0.kind == RequestKind.delivery.name && $0.count > 0 })
                    #expect(report.checks["events checked", default: 0] > 0)
                }
            case .scrollback, .mix:
                #expect(checked > 0)
                #expect(report.peakWindowMessages > 0 && report.peakWindowMessages <= report.windowCapacity)
                if scenario == .scrollback { #expect(report.checks["complete walks counted", default: 0] > 0) }
                if scenario == .mix { #expect(report.ackedPostsReadable == report.ackedPosts) }
            case .jump:
                #expect(report.checks["anchors checked", default: 0] > 0)
            case .revalidate:
                // Each user's first visit of a conversation is a 200 (checked), the visits after it 304s.
                #expect(checked > 0)
                #expect(report.checks[CheckCounters.notModifiedKey, default: 0] > 0)
                #expect(report.checks[CheckCounters.notModifiedKey, default: 0] < report.checks[CheckCounters.revalidationsKey, default: 0])
            default:
                #expect(checked > 0)
            }
            // Requests per kind add up to the total over the throughput kinds.
            let sum = report.kinds.filter { ["events (long-poll)", "post-to-delivery", "read-back"].contains($0.kind) == false }
                .reduce(UInt64(0)) { $0 + $1.count }
            #expect(sum == report.requests)
        }
    }

    /// `feed`: a backend follows `GET /v1/events` beside posters; every
    /// acked post (retries included) reaches it exactly once, and it ends
    /// at most one answer behind.
    @Test func backendFeedIsExact() throws {
        try withSeededServer { server, _ in
            var plan = quickPlan(server.endpoint, .feed, clients: 2)
            plan.writers = 6
            let outcome = try ServerFeedRun.execute(plan)
            #expect(outcome.passed, "\(outcome.text)")
            #expect(outcome.acked > 25)
            #expect(outcome.missing.isEmpty && outcome.repeated == 0)
            #expect(outcome.report.checks["events checked", default: 0] >= outcome.acked)
            #expect(outcome.report.kinds.contains { $0.kind == RequestKind.delivery.name && $0.count > 0 })
            #expect(outcome.ends.count == 2 && outcome.ends.allSatisfy { $0.events <= 1000 })
            #expect(outcome.report.ackedPostsReadable == outcome.report.ackedPosts)
        }
    }

    @Test func openLoopKeepsTheSchedule() throws {
        try withSeededServer { server, _ in
            var plan = quickPlan(server.endpoint, .deep, clients: 2)
            plan.rate = 200
            let report = try LoadRun.execute(plan)
            // 2 s at 200/s: the schedule, give or take the first and last slot of each user.
            #expect(report.requests >= 380 && report.requests <= 404)
            #expect(report.violationCount == 0)
        }
    }

    @Test func jsonReportHasTheSameFigures() throws {
        try withSeededServer { server, _ in
            try withTemporaryDirectory { directory in
                let report = try LoadRun.execute(quickPlan(server.endpoint, .deep, clients: 2, seconds: 1))
                let path = directory.url.appending(path: "report.json").path
                try report.writeJSON(to: path)
                let object = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any]
                #expect(object?["requests"] as? Int == Int(report.requests))
                #expect(object?["violation_count"] as? Int == 0)
                #expect((object?["kinds"] as? [[String: Any]])?.first?["p99_ms"] != nil)
            }
        }
    }
}

@Suite("Bench suite against history-server", .serialized)
struct BenchSuiteTests {
    /// The whole suite at toy sizes: every row present in its order, the
    /// page rows' notes built from their rounds, nothing violated; the
    /// inbox rows after them, their set-up made by the suite itself.
    @Test func theSuiteProducesEveryRowInRounds() throws {
        try withSeededServer { server, _ in
            // Windows of 1 s: at 0.4 s a row of 2 clients on a loaded CI
            // machine (the whole suite runs in parallel) once finished no
            // request at all.
            var settings = BenchSuite.Settings(endpoint: server.endpoint, duration: .seconds(1), clients: 2, posters: 4,
                                               longPolls: 20, longPollConversations: 5, idleConnections: 10,
                                               pageRounds: 2, warmup: .milliseconds(200), progress: false)
            settings.inboxLarge = 40
            settings.crowdMembers = 12
            settings.inboxPollers = 20
            settings.inboxFeedConversations = 5
            let rows = try BenchSuite(settings: settings).run { _ in }
            #expect(rows.count == 17)
            let names = rows.map(\.name)
            #expect(names[0].hasPrefix("Deep `before` pages, load-0000"))
            #expect(names[1] == "Newest page, load-0000")
            #expect(names[2].hasPrefix("Newest page, random short conversation"))
            #expect(names[3].hasPrefix("`around` page deep in load-0000"))
            #expect(names[4].hasPrefix("Jump by time deep in load-0000"))
            #expect(names[5] == "Appends, 4 posters")
            #expect(names[6].hasPrefix("Post-to-delivery, 20 long-polls"))
            #expect(names[7] == "Deep pages with 10 idle keep-alive connections open")
            #expect(names[8] == "Newest page, load-0000, identity")
            #expect(names[9] == "Newest page, load-0000, gzip")
            #expect(names[10] == "Newest page, load-0000, revalidated (304)")
            #expect(names[11].hasPrefix("Reopening held conversations"))
            #expect(names[12] == "Inbox page, a user with 10 conversations")
            #expect(names[13] == "Inbox page, a user with 40 conversations")
            #expect(names[14] == "Appends to a conversation with 2 members, 4 posters")
            #expect(names[15] == "Appends to a conversation with 12 members, 4 posters")
            #expect(names[16] == "Post-to-inbox-feed, 20 users parked on their inbox feeds")
            #expect(rows[0].note.contains("median of 2 rounds: "))
            #expect(rows[1].note.contains(" vs deep (median of 2 rounds: "))
            #expect(rows[4].note.contains("median latency ratio to `around`: "))
            #expect(rows[7].note.hasPrefix("10 idle open; "))
            // The bytes rows: bytes as sent, and the server process's CPU (found by its port).
            #expect(rows[8...10].allSatisfy { $0.note.contains(" bytes per page as sent; ") })
            #expect(rows[11].note.hasPrefix("304 share "))
            #expect(rows[10].note.contains("% were 304"))
            #expect(rows[13].note.contains(" vs 10 conversations (median of 2 rounds: "))
            #expect(rows[15].note.contains(" vs 2 members (median of 2 rounds: "))
            #expect(rows[16].note.contains("server peak RSS "))
            #expect(rows.allSatisfy { $0.report.passed }, "\(rows.map(\.note))")
            // Pages, jumps and appends always flow; deliveries in 0.4 s depend on the machine's load.
            let stalled = [0, 1, 2, 3, 4, 5, 7, 8, 9, 10, 11, 12, 13, 14, 15].filter { rows[$0].rate <= 0 }
            #expect(stalled.isEmpty, "rows with no request answered: \(stalled.map { names[$0] })")
            #expect(rows[8...15].allSatisfy { $0.report.errorCount == 0 })
            let markdown = BenchSuite.markdown(rows)
            #expect(markdown.split(separator: "\n").filter { $0.hasPrefix("| ") }.count == 18)
            // A second suite finds the inbox set-up complete and makes nothing again.
            var logged: [String] = []
            settings.pageRounds = 1
            _ = try BenchSuite(settings: settings).inboxRows { logged.append($0) }
            #expect(!logged.contains { $0.contains("set-up") }, "\(logged)")
        }
    }
}

@Suite("Seeding", .serialized)
struct SeedTests {
    @Test func directSeedLoadsTheExactCounts() throws {
        try withSeededServer(conversations: 9, messages: 2_345) { server, plan in
            let sizes = plan.sizes()
            var total: Int64 = 0
            for index in 0..<plan.conversations {
                let entry = try #require(try conversationEntry(server.endpoint, plan.conversationID(index)))
                #expect(entry.messageCount == Int64(sizes[index]))
                total += entry.messageCount
            }
            #expect(total == 2_345)
            #expect(try conversationEntry(server.endpoint, plan.conversationID(9)) == nil)
            let catalog = try ConversationCatalog.discover(endpoint: server.endpoint, prefix: "load-", maximum: 1_000)
            #expect(catalog.entries.count == 9 && catalog.largest?.id == "load-0000")
        }
    }

    @Test func httpSeedPostsEveryMessage() throws {
        try withTemporaryDirectory { directory in
            let server = try ServerProcess(database: directory.databasePath)
            defer { server.stop() }
            let plan = SeedPlan(conversations: 7, messages: 1_500, seed: 3, prefix: "load-")
            let outcome = try HTTPSeeder.seed(plan, endpoint: server.endpoint, parallel: 4,
                                              progress: SeedProgress(total: 1_500, enabled: false))
            #expect(outcome.messages == 1_500 && outcome.conversationsCreated == 7)
            #expect(outcome.failures.isEmpty, "\(outcome.failures)")
            #expect(outcome.replies > 0 && outcome.edits > 0)
            let sizes = plan.sizes()
            for index in 0..<7 {
                let entry = try #require(try conversationEntry(server.endpoint, plan.conversationID(index)))
                #expect(entry.messageCount == Int64(sizes[index]))
                // One version per append, edit and delete.
                #expect(entry.version >= entry.messageCount)
            }
            // Seeding again with the same seed stores nothing twice (client_id).
            let again = try HTTPSeeder.seed(SeedPlan(conversations: 7, messages: 1_500, seed: 3, prefix: "load-"),
                                            endpoint: server.endpoint, parallel: 2,
                                            progress: SeedProgress(total: 1_500, enabled: false))
            #expect(again.conversationsExisting == 7)
            let first = try #require(try conversationEntry(server.endpoint, plan.conversationID(0)))
            #expect(first.messageCount == Int64(sizes[0]))
        }
    }
}
