import Foundation
import HistoryTestSupport
import Testing
@testable import HistoryLoad

/// The `inbox` scenario against the real server: users who are members of
/// every seeded conversation walk their inboxes, read, and move markers
/// while a writer posts; every check runs and none is violated.
@Suite("Inbox scenario against history-server", .serialized)
struct InboxScenarioTests {
    @Test func inboxUsersHoldTheInvariants() throws {
        try withTemporaryDirectory { directory in
            let path = directory.databasePath
            let users = 3
            let plan = SeedPlan(conversations: 14, messages: 2_500, seed: 11, prefix: "load-")
            let outcome = try DirectSeeder.seed(plan, path: path, progress: SeedProgress(total: 2_500, enabled: false),
                                                members: (0..<users).map { LoadCredentials.subject(ofUser: $0, members: users) })
            #expect(outcome.membersAdded == 14 * users && outcome.failures.isEmpty)
            let server = try ServerProcess(database: path)
            defer { server.stop() }
            var run = quickPlan(server.endpoint, .inbox, clients: 4, seconds: 3)
            run.settings.inboxUsers = users
            run.settings.pageSize = 5   // 14 conversations: a walk of three pages
            run.rate = 40
            let report = try LoadRun.execute(run)
            #expect(report.violationCount == 0, "\(report.text)")
            #expect(report.errorCount == 0, "\(report.errors)")
            #expect(report.users["inbox"] == 4 && report.users["writer"] == 1)
            #expect(report.checks["inbox pages checked", default: 0] > 0)
            #expect(report.checks["inbox walks checked", default: 0] > 0)
            #expect(report.checks["read markers moved", default: 0] > 0)
            #expect(report.checks["unread counts compared with the messages read", default: 0] > 0)
            #expect(report.checks["unread counts at a marked newest message compared", default: 0] > 0)
            #expect(report.kinds.contains { $0.kind == RequestKind.aroundPage.name && $0.count > 0 })
            #expect(report.ackedPosts > 0 && report.ackedPostsReadable == report.ackedPosts)
        }
    }

    @Test func anInboxRunWithoutMembersSaysHowToSeed() throws {
        try withSeededServer(conversations: 3, messages: 100) { server, _ in
            let error = #expect(throws: LoadError.self) { try LoadRun.execute(quickPlan(server.endpoint, .inbox)) }
            #expect(error?.description.contains("--add-members") == true)
        }
    }
}
