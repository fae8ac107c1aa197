import Foundation
import HTTPCore
import HistoryTestSupport
import Testing
@testable import HistoryLoad

/// `seed` on the small and the throttled: a direct seed of a few messages
/// per conversation still makes replies, and an HTTP seed against a
/// rate-limited server waits out its 429s instead of counting failures.
@Suite("Seeding: small seeds and rate limits", .serialized)
struct SeedWaitsAndRepliesTests {
    /// 4 conversations of 60 messages or fewer, each below one chunk of the
    /// direct loader: replies were only made from the second chunk on.
    @Test func aSmallDirectSeedMakesReplies() throws {
        try withTemporaryDirectory { directory in
            let plan = SeedPlan(conversations: 4, messages: 120, seed: 5, prefix: "load-")
            let outcome = try DirectSeeder.seed(plan, path: directory.databasePath,
                                                progress: SeedProgress(total: 120, enabled: false))
            #expect(outcome.messages == 120)
            #expect(outcome.replies >= 5, "\(outcome.replies) replies of 120 messages")
            let server = try ServerProcess(database: directory.databasePath)
            defer { server.stop() }
            let connection = try HTTPClientConnection(host: "127.0.0.1", port: server.port)
            defer { connection.close() }
            var stored = 0
            for index in 0..<plan.conversations {
                let page = try connection.request(HTTPRequest(method: .get,
                                                              target: "/v1/conversations/\(plan.conversationID(index))/messages?limit=200"))
                #expect(page.status == 200)
                let json = try #require(try JSONSerialization.jsonObject(with: Data(page.body)) as? [String: Any])
                let messages = try #require(json["messages"] as? [[String: Any]])
                let ids = Set(messages.compactMap { ($0["id"] as? NSNumber)?.int64Value })
                for message in messages {
                    guard let target = (message["reply_to"] as? NSNumber)?.int64Value else { continue }
                    stored += 1
                    #expect(ids.contains(target), "a reply to \(target), not in its conversation")
                    #expect(target < ((message["id"] as? NSNumber)?.int64Value ?? 0), "a reply to a later message")
                }
            }
            #expect(stored == outcome.replies)
        }
    }

    /// A server allowing 20 writes a second (burst 20) and 150 posts: the
    /// seeder meets 429s, waits each `Retry-After`, and stores every post
    /// once with no failure.
    @Test(.timeLimit(.minutes(1)))
    func anHTTPSeedWaitsOutRateLimits() throws {
        try withTemporaryDirectory { directory in
            let server = try ServerProcess(database: directory.databasePath,
                                           extraArguments: ["--rate-limit-writes", "20", "--rate-limit-burst", "20"])
            defer { server.stop() }
            let plan = SeedPlan(conversations: 2, messages: 150, seed: 9, prefix: "load-")
            let outcome = try HTTPSeeder.seed(plan, endpoint: server.endpoint, parallel: 2,
                                              progress: SeedProgress(total: 150, enabled: false))
            #expect(outcome.failures.isEmpty, "\(outcome.failures)")
            #expect(outcome.messages == 150 && outcome.conversationsCreated == 2)
            #expect(outcome.rateLimitWaits > 0)
            let sizes = plan.sizes()
            for index in 0..<2 {
                let entry = try #require(try conversationEntry(server.endpoint, plan.conversationID(index)))
                #expect(entry.messageCount == Int64(sizes[index]))
            }
        }
    }
}
