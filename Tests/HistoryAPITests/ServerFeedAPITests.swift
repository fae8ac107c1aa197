import HistoryTestSupport
import Foundation
import HTTPCore
import HistoryAPI
import HistoryWiring
import Synchronization
import Testing

/// `GET /v1/events` over real sockets (docs/API.md, "Live"): every change
/// kind in activity order, exact paging, long-polls, and admin only.
@Suite struct ServerFeedAPITests {
    @Test func everyChangeKindAppearsOnceInActivityOrder() throws {
        try withRunningServer { server in
            let client = try server.connect()
            defer { client.close() }
            let start = try client.serverFeed(since: 0).activity
            try client.createConversation("general")
            #expect(try client.call(.put, "/v1/conversations/general/members/ana", json: "{}").status == 201)
            #expect(try client.call(.put, "/v1/conversations/general/members/ana", json: #"{"role":"owner"}"#).status == 200)
            // Unchanged: no write, no event.
            #expect(try client.call(.put, "/v1/conversations/general/members/ana", json: #"{"role":"owner"}"#).status == 200)
            let first = try client.appendRaw("general", body: "one")
            let second = try client.appendRaw("general", body: "two")
            #expect(try client.patch("/v1/conversations/general/messages/\(first.id)", #"{"body":"one, edited"}"#).status == 200)
            #expect(try client.delete("/v1/conversations/general/messages/\(second.id)").status == 200)
            // A tombstone deleted again changes nothing: no event.
            #expect(try client.delete("/v1/conversations/general/messages/\(second.id)").status == 200)
            #expect(try client.call(.put, "/v1/conversations/general/members/ana/read",
                                    json: #"{"last_read_id":\#(first.id)}"#).status == 200)
            #expect(try client.call(.delete, "/v1/conversations/general/members/ana").status == 200)
            // Refused writes leave nothing either.
            #expect(try client.patch("/v1/conversations/general/messages/\(second.id)", #"{"body":"x"}"#).status == 409)

            let feed = try client.serverFeed(since: start)
            #expect(!feed.has_more)
            #expect(feed.events.map(\.type) == ["member_added", "member_changed", "created", "created", "edited", "deleted",
                                                "member_removed"])
            #expect(feed.events.allSatisfy { $0.conversation_id == "general" })
            #expect(feed.events.map(\.activity) == feed.events.map(\.activity).sorted())
            #expect(Set(feed.events.map(\.activity)).count == feed.events.count)
            #expect(feed.events.allSatisfy { $0.activity > start })
            // The read marker took an activity value too, between the delete and the removal.
            #expect(feed.activity == feed.events[6].activity && feed.events[6].activity - feed.events[5].activity == 2)
            #expect(feed.events[0].member == ServerMemberBody(user_id: "ana", role: "member", joined_at: feed.events[0].member?.joined_at))
            #expect(feed.events[0].member?.joined_at != nil && feed.events[0].message == nil)
            #expect(feed.events[1].member?.role == "owner")
            #expect(feed.events[6].member == ServerMemberBody(user_id: "ana", role: nil, joined_at: nil))
            // Messages as they are now: the first edited, the second a tombstone everywhere.
            #expect(feed.events[2].message?.id == first.id && feed.events[2].message?.body == "one, edited")
            #expect(feed.events[3].message?.id == second.id && feed.events[3].message?.deleted == true)
            #expect(feed.events[3].message?.body == "" && feed.events[5].message?.deleted == true)
            #expect(feed.events[4].message?.body == "one, edited" && feed.events[2].member == nil)

            // The shape, key by key.
            let tree = try client.get("/v1/events?since=\(start)").decode(JSONTree.self)
            #expect(tree.keys == ["events", "has_more", "activity"])
            #expect(tree["events"]?.elements.first?.keys == ["activity", "type", "conversation_id", "member"])
            #expect(tree["events"]?.elements[2].keys == ["activity", "type", "conversation_id", "message"])
            #expect(try client.serverFeed(since: feed.activity).events.isEmpty)
            expectError(try client.get("/v1/events?since=\(feed.activity + 1)"), 400, "invalid_version")
        }
    }

    @Test func pagingWithSinceAndLimitIsExact() throws {
        try withRunningServer { server in
            let client = try server.connect()
            defer { client.close() }
            let start = try client.serverFeed(since: 0).activity
            try client.createConversation("a")
            try client.createConversation("b")
            var posted: [Int64] = []
            for index in 0..<23 { posted.append(try client.appendMessage(index % 2 == 0 ? "a" : "b")) }
            let whole = try client.serverFeed(since: start, limit: 1000)
            #expect(whole.events.compactMap(\.message?.id) == posted && !whole.has_more)
            for limit in [1, 2, 5, 22, 23] {
                let paged = try client.wholeServerFeed(since: start, limit: limit)
                #expect(paged.map(\.activity) == whole.events.map(\.activity), "limit \(limit)")
            }
            // From the middle: exactly what follows.
            let middle = whole.events[10].activity
            #expect(try client.wholeServerFeed(since: middle, limit: 4).map(\.activity) == whole.events.dropFirst(11).map(\.activity))
            for bad in ["limit=0", "limit=1001", "limit=x"] {
                expectError(try client.get("/v1/events?\(bad)"), 400, "invalid_limit")
            }
            for bad in ["since=-1", "since=x"] {
                expectError(try client.get("/v1/events?\(bad)"), 400, "invalid_version")
            }
            expectError(try client.get("/v1/events?wait=61"), 400, "invalid_wait")
        }
    }

    @Test func aFeedPastTheResponseBudgetStopsEarlyWithHasMore() throws {
        let budget = 4096
        try withOpenServer({ $0.maximumResponseBytes = budget }) { server in
            let client = try server.connect()
            defer { client.close() }
            try client.createConversation("big")
            var posted: [Int64] = []
            for _ in 0..<8 { posted.append(try client.appendMessage("big", body: String(repeating: "y", count: 1000))) }
            var seen: [Int64] = []
            var since: Int64 = 0
            while true {
                let response = try client.get("/v1/events?since=\(since)")
                #expect(response.body.count <= budget)
                let feed = try response.decode(ServerFeedBody.self)
                #expect(!feed.events.isEmpty || !feed.has_more)
                seen += feed.events.compactMap(\.message?.id)
                since = feed.activity
                if !feed.has_more { break }
            }
            #expect(seen == posted)
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func aParkedPollIsWokenByAChangeInAnyConversation() throws {
        try withRunningServer { server in
            let client = try server.connect()
            defer { client.close() }
            try client.createConversation("quiet")
            let since = try client.serverFeed(since: 0).activity
            let poll = try server.parkPoll("/v1/events?since=\(since)&wait=30")
            defer { poll.close() }
            #expect(eventually { server.application.parkedLongPollCount == 1 })
            let posted = try client.appendMessage("quiet")
            let answer = try poll.receive()
            #expect(answer.status == 200)
            let feed = try answer.decode(ServerFeedBody.self)
            #expect(feed.events.map(\.type) == ["created"] && feed.events.first?.message?.id == posted)

            // A member change wakes it too; a short wait with nothing answers empty at the current activity.
            let next = try server.parkPoll("/v1/events?since=\(feed.activity)&wait=30")
            defer { next.close() }
            #expect(eventually { server.application.parkedLongPollCount == 1 })
            #expect(try client.call(.put, "/v1/conversations/quiet/members/bob", json: "{}").status == 201)
            let woken = try next.receive().decode(ServerFeedBody.self)
            #expect(woken.events.map(\.type) == ["member_added"])
            let idle = try client.get("/v1/events?since=\(woken.activity)&wait=0.2").decode(ServerFeedBody.self)
            #expect(idle.events.isEmpty && !idle.has_more && idle.activity == woken.activity)
        }
    }

    @Test func onlyAdminTokensMayReadIt() throws {
        try withTokenServer { server, minter in
            let client = try server.connect()
            defer { client.close() }
            let ana = minter.user("ana")
            #expect(try client.createConversation("general", ownedBy: ana) == 201)
            expectError(try client.call(.get, "/v1/events", token: ana), 403, "forbidden")
            expectError(try client.call(.get, "/v1/events?since=0&wait=5", token: ana), 403, "forbidden")
            expectError(try client.call(.get, "/v1/events"), 401, "missing_token")
            let feed = try client.serverFeed(since: 0, token: minter.admin())
            // The admin's create names no owner; making ana its owner is her member_added.
            #expect(feed.events.map(\.type) == ["member_added"])
            #expect(feed.events.first?.member?.user_id == "ana" && feed.events.first?.member?.role == "owner")
            // A user's own create makes it the owner in the same change: member_added too.
            let created = try client.call(.post, "/v1/conversations", token: ana, json: "{}")
            #expect(created.status == 201)
            let later = try client.serverFeed(since: feed.activity, token: minter.admin())
            #expect(later.events.map(\.type) == ["member_added"] && later.events.first?.member?.role == "owner")
            #expect(later.events.first?.member?.user_id == "ana")
        }
    }
}
