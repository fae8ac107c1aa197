import Dispatch
import Foundation
import HTTPCore
import HistoryAPI
import HistoryClient
import HistoryStore
import HistoryTestSupport
import HistoryWiring
import Synchronization
import Testing

@Suite("API: events and long-polls")
struct EventAPITests {
    @Test func compactedChangesAfterAVersion() throws {
        try withRunningServer { client in
            try client.createConversation("c")
            let first = try client.appendMessage("c")
            let second = try client.appendMessage("c")
            _ = try client.patch("/v1/conversations/c/messages/\(first)", #"{"body":"edited"}"#)
            _ = try client.delete("/v1/conversations/c/messages/\(second)")

            let all = try client.get("/v1/conversations/c/events")
            #expect(all.status == 200)
            #expect(try all.decode(JSONTree.self).keys == ["events", "has_more", "version"])
            let batch = try all.decode(HistoryEventBatch.self)
            // Each message once, in the order of its last change, typed by the since asked about.
            #expect(batch.events.map(\.kind) == [.created, .created])
            #expect(batch.events.map(\.message.id) == [first, second])
            #expect(batch.events.map(\.version) == [3, 4])
            #expect(batch.version == 4)
            #expect(batch.hasMore == false)

            let later = try client.get("/v1/conversations/c/events?since=2")
            #expect(try later.decode(HistoryEventBatch.self).events.map(\.kind) == [.edited, .deleted])

            let paged = try client.get("/v1/conversations/c/events?since=0&limit=1")
            let firstOfTwo = try paged.decode(HistoryEventBatch.self)
            #expect(firstOfTwo.hasMore == true)
            #expect(firstOfTwo.version == 3)

            let filtered = try client.get("/v1/conversations/c/events?min_id=\(second)&max_id=\(second)")
            #expect(try filtered.messageIDs() == [second])

            let current = try client.get("/v1/conversations/c/events?since=4")
            #expect(try current.messageIDs().isEmpty)
            #expect(try current.decode(HistoryEventBatch.self).version == 4)
        }
    }

    @Test(arguments: [
        ("?since=5", "invalid_version"), ("?since=-1", "invalid_version"), ("?since=x", "invalid_version"),
        ("?since=1&since=1", "invalid_version"), ("?since=", "invalid_version"),
        ("?limit=0", "invalid_limit"), ("?limit=1001", "invalid_limit"),
        ("?wait=61", "invalid_wait"), ("?wait=-1", "invalid_wait"), ("?wait=abc", "invalid_wait"), ("?wait=1e1", "invalid_wait"),
        ("?wait=60.5", "invalid_wait"), ("?wait=1&wait=1", "invalid_wait"),
        ("?min_id=0", "invalid_id_range"), ("?max_id=-4", "invalid_id_range"), ("?min_id=9&max_id=3", "invalid_id_range"),
        ("?min_id=x", "invalid_id_range"), ("?max_id=9223372036854775808", "invalid_id_range"),
    ])
    func invalidEventParameters(_ query: String, _ code: String) throws {
        try withRunningServer { client in
            try client.createConversation("c")
            try client.appendMessage("c")
            expectError(try client.get("/v1/conversations/c/events\(query)"), 400, code)
        }
    }

    @Test func eventsOfAnUnknownConversationAreNotFound() throws {
        try withRunningServer { client in
            expectError(try client.get("/v1/conversations/none/events?wait=1"), 404, "conversation_not_found")
        }
    }

    @Test func aLongPollIsWokenByAPostFromAnotherConnection() throws {
        try withRunningServer { server in
            let poller = try server.connect(timeout: .seconds(30))
            let poster = try server.connect()
            defer {
                poller.close()
                poster.close()
            }
            try poster.createConversation("live")
            try poller.send(HTTPRequest(method: .get, target: "/v1/conversations/live/events?since=0&wait=20"))
            // Parked before the post: the store counts it (bounded wait for the park).
            let parked = eventually { server.application.store.parkedWaitCount == 1 }
            #expect(parked)
            let id = try poster.appendMessage("live", body: "wake up")
            let answer = try poller.receive()
            #expect(answer.status == 200)
            #expect(try answer.messageIDs() == [id])
            #expect(try answer.decode(HistoryEventBatch.self).version == 1)
        }
    }

    @Test func aFilteredLongPollIgnoresChangesOutsideItsRange() throws {
        try withRunningServer { server in
            let poller = try server.connect(timeout: .seconds(30))
            let poster = try server.connect()
            defer {
                poller.close()
                poster.close()
            }
            try poster.createConversation("w")
            let first = try poster.appendMessage("w")
            try poller.send(HTTPRequest(method: .get, target: "/v1/conversations/w/events?since=1&wait=20&max_id=\(first)"))
            #expect(eventually { server.application.store.parkedWaitCount == 1 })
            // A new message is outside max_id: the poll parks again.
            try poster.appendMessage("w")
            #expect(eventually { server.application.store.parkedWaitCount == 1 })
            _ = try poster.patch("/v1/conversations/w/messages/\(first)", #"{"body":"in range"}"#)
            let answer = try poller.receive()
            let batch = try answer.decode(HistoryEventBatch.self)
            #expect(batch.events.map(\.message.id) == [first])
            #expect(batch.events.first?.kind == .edited)
            #expect(batch.version == 3)
        }
    }

    @Test func aLongPollTimesOutWithTheCurrentVersion() throws {
        try withRunningServer { client in
            try client.createConversation("quiet")
            try client.appendMessage("quiet")
            let answer = try client.get("/v1/conversations/quiet/events?since=1&wait=0.3")
            #expect(answer.status == 200)
            let batch = try answer.decode(HistoryEventBatch.self)
            #expect(batch.events.isEmpty)
            #expect(batch.version == 1)
            #expect(batch.hasMore == false)
        }
    }

    @Test func aClientThatGoesAwayReleasesItsWait() throws {
        try withRunningServer { server in
            let client = try server.connect()
            try client.createConversation("gone")
            try client.send(HTTPRequest(method: .get, target: "/v1/conversations/gone/events?wait=30"))
            #expect(eventually { server.application.store.parkedWaitCount == 1 })
            client.close()
            #expect(eventually { server.application.store.parkedWaitCount == 0 })
        }
    }

    @Test func shutdownAnswersParkedLongPolls() throws {
        try withRunningServer { server in
            let application = server.application
            let client = try server.connect(timeout: .seconds(30))
            defer { client.close() }
            try client.createConversation("drain")
            try client.send(HTTPRequest(method: .get, target: "/v1/conversations/drain/events?wait=30"))
            #expect(eventually { application.store.parkedWaitCount == 1 })
            let stopped = Atomic<Bool>(false)
            application.shutdown(gracePeriod: .seconds(5)) { stopped.store(true, ordering: .releasing) }
            let answer = try client.receive()
            #expect(answer.status == 200)
            let batch = try answer.decode(HistoryEventBatch.self)
            #expect(batch.events.isEmpty)
            #expect(batch.version == 0)
            #expect(eventually { stopped.load(ordering: .acquiring) })
        }
    }
}
