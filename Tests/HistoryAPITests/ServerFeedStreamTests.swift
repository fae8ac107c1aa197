import Foundation
import HTTPCore
import HistoryAPI
import HistoryTestSupport
import Testing

/// `GET /v1/events` as Server-Sent Events (docs/API.md, "Live"): the same
/// event objects as the long-poll, `Last-Event-ID` resuming exactly, and
/// admin only.
@Suite("The backend feed as a stream")
struct ServerFeedStreamTests {
    private func openStream(_ server: RunningServer, _ target: String, headers: [(String, String)] = [],
                            sourceLocation: SourceLocation = #_sourceLocation) throws -> EventStreamClient {
        let stream = try EventStreamClient(port: server.port, target: target, headers: headers, timeout: .seconds(20))
        let head = try stream.head()
        #expect(head.status == 200, "\(head.body)", sourceLocation: sourceLocation)
        #expect(head.headers["content-type"] == "text/event-stream", sourceLocation: sourceLocation)
        return stream
    }

    @Test func aStreamCarriesEveryChangeAndResumesAfterLastEventID() throws {
        try withRunningServer { server in
            let client = try server.connect()
            defer { client.close() }
            try client.createConversation("c")
            let start = try client.serverFeed(since: 0).activity
            let stream = try openStream(server, "/v1/events?since=\(start)")
            let first = try client.appendMessage("c", body: "first")
            #expect(try client.call(.put, "/v1/conversations/c/members/bob", json: "{}").status == 201)
            #expect(try client.delete("/v1/conversations/c/messages/\(first)").status == 200)
            let events = try (0..<3).map { _ in try stream.nextEvent() }
            stream.close()
            #expect(events.map(\.type) == ["created", "member_added", "deleted"])
            // Each `data` is the object the long-poll's events array holds, `id` its activity.
            let polled = try client.serverFeed(since: start)
            #expect(events.map(\.id) == polled.events.map { String($0.activity) })
            for event in events {
                #expect(event.json["activity"] as? Int == Int(event.id ?? ""))
                #expect(event.json["type"] as? String == event.type)
                #expect(event.json["conversation_id"] as? String == "c")
            }
            #expect((events[1].json["member"] as? [String: Any])?["user_id"] as? String == "bob")

            // Resumed after the first event: the other two, nothing repeated.
            let resumed = try openStream(server, "/v1/events?since=0", headers: [("Last-Event-ID", events[0].id ?? "")])
            defer { resumed.close() }
            let rest = try (0..<2).map { _ in try resumed.nextEvent() }
            #expect(rest.map(\.id) == events.dropFirst().map(\.id))
            let next = try client.appendMessage("c", body: "next")
            let live = try resumed.nextEvent()
            #expect(live.type == "created" && (live.json["message"] as? [String: Any])?["id"] as? Int == Int(next))
        }
    }

    @Test func aUserTokenMayNotStreamIt() throws {
        try withTokenServer { server, minter in
            let stream = try EventStreamClient(port: server.port, target: "/v1/events",
                                               headers: [("Authorization", "Bearer \(minter.user("ana"))")], timeout: .seconds(20))
            defer { stream.close() }
            let head = try stream.head()
            #expect(head.status == 403 && head.body.contains("forbidden"))
            let admin = try openStream(server, "/v1/events", headers: [("Authorization", "Bearer \(minter.admin())")])
            admin.close()
        }
    }
}
