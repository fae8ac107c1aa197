import HTTPCore
import HistoryAPI
import HistoryTestSupport
import HistoryWiring
import Testing

/// Streams open on one instance follow changes committed through another,
/// woken only through PostgreSQL (LISTEN), as parked long-polls are.
@Suite("A stream on one instance follows changes made through another", .postgresCluster)
struct CrossInstanceStreamTests {
    @Test(.timeLimit(.minutes(2)))
    func postsAndEditsThroughBReachStreamsOpenOnA() throws {
        try withTwoInstances { a, b in
            let throughB = try HTTPClientConnection(host: "127.0.0.1", port: b.port, timeout: .seconds(60))
            defer { throughB.close() }
            try throughB.makeConversations(["c"], members: ["ana"])
            let first = try throughB.appendMessage("c", body: "first")
            let activity = try throughB.inboxFeed("ana", since: 0).activity

            let conversation = try EventStreamClient(port: a.port, target: "/v1/conversations/c/events?since=1",
                                                     timeout: .seconds(30))
            #expect(try conversation.head().status == 200)
            let inbox = try EventStreamClient(port: a.port, target: "/v1/users/ana/events?since=\(activity)",
                                              timeout: .seconds(30))
            #expect(try inbox.head().status == 200)
            #expect(eventually { a.parkedLongPollCount == 2 })

            let second = try throughB.appendMessage("c", body: "second")
            #expect(try throughB.patch("/v1/conversations/c/messages/\(first)", #"{"body":"edited"}"#).status == 200)
            let created = try conversation.nextEvent()
            #expect(created.type == "created")
            #expect(created.id == "2")
            #expect((created.json["message"] as? [String: Any])?["id"] as? Int == Int(second))
            let edited = try conversation.nextEvent()
            #expect(edited.type == "edited")
            #expect(edited.id == "3")

            let updated = try inbox.nextEvent()
            #expect(updated.type == "updated")
            #expect((updated.json["conversation"] as? [String: Any])?["id"] as? String == "c")
            #expect(Int64(updated.id ?? "") ?? 0 > activity)
        }
    }
}
