import HTTPCore
import HistoryAPI
import HistoryClient
import HistoryTestSupport
import HistoryWiring
import Testing

/// Long-polls and the limits on them, over real sockets: at most
/// `maximumParkedPollsPerClient` parked per client, and a poll filtered to
/// an id range is not woken (costs no read) by changes outside it.
@Suite("Parked long-poll limits")
struct ParkedPollLimitTests {
    /// Sends a long-poll on a new connection without waiting for its answer.
    func park(_ server: RunningServer, _ target: String) throws -> HTTPClientConnection {
        let connection = try server.connect(timeout: .seconds(60))
        try connection.sendRaw("GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        return connection
    }

    @Test func aClientPastItsParkedPollsGets429() throws {
        try withOpenServer({ $0.maximumParkedPollsPerClient = 2 }) { server in
            let client = try server.connect()
            defer { client.close() }
            try client.createConversation("c")
            let parked = try (0..<2).map { _ in try park(server, "/v1/conversations/c/events?since=0&wait=30") }
            defer { for connection in parked { connection.close() } }
            #expect(eventually { server.application.parkedLongPollCount == 2 })
            expectError(try client.get("/v1/conversations/c/events?since=0&wait=30"), 429, "too_many_requests")
            // A poll that does not park is not counted.
            #expect(try client.get("/v1/conversations/c/events?since=0").status == 200)
            // Once one is answered, the client may park another.
            try client.appendMessage("c")
            #expect(try parked[0].receive().status == 200)
            #expect(try parked[1].receive().status == 200)
            #expect(eventually { server.application.parkedLongPollCount == 0 })
            let again = try park(server, "/v1/conversations/c/events?since=1&wait=30")
            defer { again.close() }
            #expect(eventually { server.application.parkedLongPollCount == 1 })
        }
    }

    @Test func appendsOutsideAPollsIDRangeCostItNoRead() throws {
        try withOpenServer({ _ in }) { server in
            let client = try server.connect()
            defer { client.close() }
            try client.createConversation("c")
            let watched = try client.appendMessage("c")
            let pollCount = 5
            let polls = try (0..<pollCount).map { _ in
                try park(server, "/v1/conversations/c/events?since=1&wait=30&min_id=\(watched)&max_id=\(watched)")
            }
            defer { for poll in polls { poll.close() } }
            #expect(eventually { server.application.parkedLongPollCount == pollCount })
            for _ in 0..<20 { try client.appendMessage("c") }
            // An edit of the watched message is in range: every poll wakes
            // once and answers it.
            let edited = try client.patch("/v1/conversations/c/messages/\(watched)", #"{"body":"changed"}"#)
            #expect(edited.status == 200)
            for poll in polls {
                let answer = try poll.receive()
                #expect(answer.status == 200)
                let batch = try answer.decode(HistoryEventBatch.self)
                #expect(batch.events.map(\.message.id) == [watched])
                #expect(batch.events.first?.kind == .edited)
            }
            // Each poll read again exactly once, for the edit: none of the
            // twenty appends woke it.
            #expect(server.application.longPollRereadCount == pollCount)
        }
    }
}
