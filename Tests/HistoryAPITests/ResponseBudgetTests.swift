import HTTPCore
import HistoryAPI
import HistoryClient
import HistoryTestSupport
import HistoryWiring
import Testing

/// `--max-response-bytes` over real sockets: pages and feeds of maximal
/// messages (16 KiB of `\u0008`, six bytes each as JSON: about 98 KB per
/// message) under a budget of a few messages. Each answer stays within the
/// budget, its flags are exact, and walking on its cursors returns every
/// message once.
@Suite("Response byte budget")
struct ResponseBudgetTests {
    static let budget = 400_000
    static let messageCount = 200
    /// 16 KiB of U+0008, written in the request as `\b` (2 bytes each).
    static let maximalBody = String(repeating: #"\b"#, count: 16 * 1024)

    /// A server with the budget and a conversation of 200 maximal messages; their ids ascending.
    func withMaximalConversation(budget: Int = ResponseBudgetTests.budget,
                                 _ body: (HTTPClientConnection, [Int64]) throws -> Void) throws {
        var configuration = RunningServer.defaultConfiguration
        configuration.maximumResponseBytes = budget
        try withRunningServer(configuration: configuration) { server in
            let client = try server.connect()
            defer { client.close() }
            try client.createConversation("big")
            var ids: [Int64] = []
            for _ in 0..<Self.messageCount {
                ids.append(try client.appendMessage("big", body: Self.maximalBody))
            }
            try body(client, ids)
        }
    }

    func page(_ client: HTTPClientConnection, _ query: String) throws -> HistoryPage {
        let response = try client.get("/v1/conversations/big/messages?limit=200&\(query)")
        #expect(response.status == 200, "\(response.bodyText.prefix(300))")
        #expect(response.body.count <= Self.budget, "a page of \(response.body.count) bytes")
        return try response.decode(HistoryPage.self)
    }

    @Test func walkingDownFromTheNewestPageReturnsEveryMessageOnce() throws {
        try withMaximalConversation { client, ids in
            var newest = try page(client, "")
            #expect(newest.messages.count > 1 && newest.messages.count < Self.messageCount)
            #expect(newest.messages.last?.id == ids.last, "the newest page keeps the newest messages")
            #expect(newest.hasOlder && !newest.hasNewer)
            var seen = newest.messages.map(\.id)
            while newest.hasOlder {
                let cursor = try #require(newest.oldestID)
                newest = try page(client, "before=\(cursor)")
                #expect(newest.messages.last.map { $0.id < cursor } ?? false)
                #expect(!newest.messages.isEmpty)
                #expect(newest.hasNewer, "messages above a before page exist")
                seen.insert(contentsOf: newest.messages.map(\.id), at: 0)
            }
            #expect(seen == ids)
        }
    }

    @Test func walkingUpWithAfterReturnsEveryMessageOnce() throws {
        try withMaximalConversation { client, ids in
            var current = try page(client, "after=0")
            #expect(current.messages.first?.id == ids.first, "an after page keeps the oldest messages")
            #expect(current.hasNewer && !current.hasOlder)
            var seen = current.messages.map(\.id)
            while current.hasNewer {
                let cursor = try #require(current.newestID)
                current = try page(client, "after=\(cursor)")
                #expect(!current.messages.isEmpty)
                #expect(current.hasOlder)
                seen += current.messages.map(\.id)
            }
            #expect(seen == ids)
        }
    }

    @Test func aBetweenPageStopsEarlyWithHasNewer() throws {
        try withMaximalConversation { client, ids in
            let gap = try page(client, "after=\(ids[9])&before=\(ids[150])")
            #expect(gap.messages.first?.id == ids[10])
            #expect(gap.messages.count < 140)
            #expect(gap.hasNewer, "messages below the before cursor were left out")
            #expect(!gap.hasOlder, "flags count within the range asked for")
        }
    }

    @Test func anAroundPageKeepsItsAnchorAndCountsItsIndexWithinTheAnswer() throws {
        try withMaximalConversation { client, ids in
            let anchorID = ids[100]
            let around = try page(client, "around=\(anchorID)")
            let anchor = try #require(around.anchor)
            #expect(anchor.found)
            let index = try #require(anchor.index)
            #expect(around.messages[index].id == anchorID)
            #expect(around.messages.count < Self.messageCount)
            #expect(around.hasOlder && around.hasNewer)
            #expect(around.oldestID == around.messages.first?.id && around.newestID == around.messages.last?.id)
            let firstID = try #require(around.messages.first?.id)
            let position = try #require(ids.firstIndex(of: firstID))
            #expect(Array(ids[position..<(position + around.messages.count)]) == around.messages.map(\.id),
                    "the page is contiguous")
        }
    }

    @Test func aFeedStopsEarlyWithHasMoreAndContinuesExactlyOnItsVersion() throws {
        try withMaximalConversation { client, ids in
            var since: Int64 = 0
            var seen: [Int64] = []
            var calls = 0
            while true {
                let response = try client.get("/v1/conversations/big/events?since=\(since)&limit=1000")
                #expect(response.status == 200)
                #expect(response.body.count <= Self.budget)
                let batch = try response.decode(HistoryEventBatch.self)
                #expect(!batch.events.isEmpty)
                seen += batch.events.map(\.message.id)
                calls += 1
                if batch.hasMore {
                    #expect(batch.version == batch.events.last?.version, "version is the last answered event's")
                }
                since = batch.version
                if !batch.hasMore { break }
            }
            #expect(calls > 1)
            #expect(seen == ids)
        }
    }

    @Test func oneMessageLargerThanTheBudgetIsStillAnswered() throws {
        try withMaximalConversation(budget: 4096) { client, ids in
            let response = try client.get("/v1/conversations/big/messages?limit=200")
            #expect(response.status == 200)
            let newest = try response.decode(HistoryPage.self)
            #expect(newest.messages.map(\.id) == [ids[ids.count - 1]])
            #expect(newest.hasOlder)
            let feed = try client.get("/v1/conversations/big/events?since=0").decode(HistoryEventBatch.self)
            #expect(feed.events.count == 1 && feed.hasMore)
        }
    }
}
