import Foundation
import HTTPCore
import HistoryAPI
import HistoryClient
import HistoryTestSupport
import HistoryWiring
import Testing

/// A user's inbox feed parked on one instance, changed through another:
/// joining a conversation wakes it, and the next poll (which keeps the
/// conversations it read) is woken by a post in the conversation just
/// joined and not by one in the conversation just left. The commits reach
/// the parked instance only through PostgreSQL (LISTEN).
@Suite("An inbox feed parked on one instance follows changes made through another", .postgresCluster)
struct CrossInstanceInboxFeedTests {
    @Test(.timeLimit(.minutes(2)))
    func joinsLeavesAndPostsThroughBWakeTheFeedParkedOnA() throws {
        try withTwoInstances { a, b in
            func connect(_ server: HistoryApplication) throws -> HTTPClientConnection {
                try HTTPClientConnection(host: "127.0.0.1", port: server.port, timeout: .seconds(60))
            }
            func park(_ target: String) throws -> HTTPClientConnection {
                let poll = try connect(a)
                try poll.send(HTTPRequest(method: .get, target: target, headers: ["Host": "127.0.0.1"]))
                return poll
            }

            let throughA = try connect(a), throughB = try connect(b)
            defer { throughA.close(); throughB.close() }
            try throughB.makeConversations(["left"], members: ["ana"])
            try throughB.makeConversations(["joined"], members: ["bob"])
            let start = try throughA.inbox("ana").activity

            // Parked on A, woken by her joining through B.
            let first = try park("/v1/users/ana/events?since=\(start)&wait=30")
            defer { first.close() }
            #expect(eventually { a.parkedLongPollCount == 1 })
            #expect(try throughB.call(.put, "/v1/conversations/joined/members/ana", json: "{}").status == 201)
            let joined = try first.receive().decode(InboxFeedBody.self)
            #expect(joined.events.map(\.conversationID) == ["joined"])

            // She leaves "left" through B; her next poll on A is woken by a post
            // in "joined", not by one in "left".
            #expect(try throughB.call(.delete, "/v1/conversations/left/members/ana").status == 200)
            let since = try throughA.inboxFeed("ana", since: joined.activity).activity
            let second = try park("/v1/users/ana/events?since=\(since)&wait=30")
            defer { second.close() }
            #expect(eventually { a.parkedLongPollCount == 1 })
            _ = try throughB.appendMessage("left", sender: "bob")
            let posted = try throughB.appendMessage("joined", sender: "bob")
            let answer = try second.receive()
            #expect(answer.status == 200)
            let feed = try answer.decode(InboxFeedBody.self)
            #expect(feed.events.map(\.conversationID) == ["joined"])
            #expect(feed.events.first?.last_message?.id == posted)
        }
    }
}
