import HistoryTestSupport
import Foundation
import HTTPCore
import HistoryAPI
import HistoryClient
import HistoryStore
import HistoryWiring
import Synchronization
import Testing

/// `GET /v1/users/{uid}/events` over real sockets: compaction, `has_more`,
/// removals, and long-polls woken by the user's own conversations only.
@Suite struct InboxFeedAPITests {
    @Test func theFeedListsEachChangedConversationOnceInActivityOrder() throws {
        try withOpenServer({ _ in }) { server in
            let client = try server.connect()
            defer { client.close() }
            try client.makeConversations(["a", "b", "c"], members: ["ana"])
            let start = try client.inbox("ana").activity
            try client.appendMessage("b", sender: "bob")
            try client.appendMessage("a", sender: "bob")
            let newest = try client.appendMessage("b", sender: "bob")

            let feed = try client.inboxFeed("ana", since: start)
            #expect(feed.events.map(\.conversationID) == ["a", "b"])
            #expect(feed.events.allSatisfy { $0.type == "updated" })
            #expect(feed.events[1].last_message?.id == newest && feed.events[1].unread_count == 2)
            #expect(feed.events.map(\.activity) == feed.events.map(\.activity).sorted())
            #expect(feed.events.allSatisfy { $0.activity > start })
            #expect(feed.has_more == false && feed.activity == feed.events.last?.activity)
            #expect(try client.inboxFeed("ana", since: feed.activity).events.isEmpty)

            // An updated event is a whole inbox row plus its type.
            let tree = try client.call(.get, "/v1/users/ana/events?since=\(start)").decode(JSONTree.self)
            #expect(tree.keys == ["events", "has_more", "activity"])
            #expect(tree["events"]?.elements.first?.keys == ["type", "conversation", "role", "last_message", "last_read_id",
                                                              "first_unread_id", "unread_count", "unread_capped", "activity"])

            // From 0: every conversation of hers once, the empty one too.
            #expect(Set(try client.inboxFeed("ana", since: 0).events.compactMap(\.conversationID)) == ["a", "b", "c"])
        }
    }

    @Test func hasMoreContinuesExactlyFromTheReturnedActivity() throws {
        try withOpenServer({ _ in }) { server in
            let client = try server.connect()
            defer { client.close() }
            let ids = ["a", "b", "c", "d", "e"]
            try client.makeConversations(ids, members: ["ana"])
            var seen: [String] = []
            var since: Int64 = 0
            while true {
                let feed = try client.inboxFeed("ana", since: since, limit: 2)
                #expect(feed.events.count <= 2)
                seen += feed.events.compactMap(\.conversationID)
                since = feed.activity
                if !feed.has_more { break }
                #expect(feed.activity == feed.events.last?.activity)
            }
            #expect(seen.sorted() == ids)
        }
    }

    @Test func aFeedPastTheResponseBudgetStopsEarlyWithHasMore() throws {
        let budget = 4096
        try withOpenServer({ $0.maximumResponseBytes = budget }) { server in
            let client = try server.connect()
            defer { client.close() }
            let ids = (0..<6).map { "c\($0)" }
            try client.makeConversations(ids, members: ["ana"])
            for id in ids { try client.appendMessage(id, sender: "bob", body: String(repeating: "y", count: 1000)) }
            var seen: [String] = []
            var since: Int64 = 0
            var calls = 0
            while true {
                let response = try client.call(.get, "/v1/users/ana/events?since=\(since)")
                #expect(response.body.count <= budget)
                let feed = try response.decode(InboxFeedBody.self)
                seen += feed.events.compactMap(\.conversationID)
                since = feed.activity
                calls += 1
                if !feed.has_more { break }
            }
            #expect(seen.sorted() == ids)
            #expect(calls > 1)
        }
    }

    @Test(arguments: [
        ("since=-1", "invalid_version"), ("since=x", "invalid_version"), ("since=999999", "invalid_version"),
        ("since=1&since=1", "invalid_version"), ("limit=0", "invalid_limit"), ("limit=1001", "invalid_limit"),
        ("wait=61", "invalid_wait"), ("wait=-1", "invalid_wait"), ("wait=1e1", "invalid_wait"),
    ])
    func invalidFeedQueries(_ query: String, _ code: String) throws {
        try withOpenServer({ _ in }) { server in
            let client = try server.connect()
            defer { client.close() }
            try client.makeConversations(["c"], members: ["ana"])
            expectError(try client.get("/v1/users/ana/events?\(query)"), 400, code)
        }
    }

    @Test func aRemovedMembershipIsDeliveredAsRemoved() throws {
        try withOpenServer({ _ in }) { server in
            let client = try server.connect()
            defer { client.close() }
            try client.makeConversations(["stay", "leave"], members: ["ana"])
            let start = try client.inbox("ana").activity
            #expect(try client.delete("/v1/conversations/leave/members/ana").status == 200)
            let feed = try client.inboxFeed("ana", since: start)
            #expect(feed.events.map(\.type) == ["removed"])
            #expect(feed.events.first?.conversation_id == "leave")
            let tree = try client.call(.get, "/v1/users/ana/events?since=\(start)").decode(JSONTree.self)
            #expect(tree["events"]?.elements.first?.keys == ["type", "conversation_id", "activity"])
            #expect(try client.inbox("ana").ids == ["stay"])
        }
    }

    // MARK: - Long-polls

    @Test func aParkedFeedIsWokenByItsUsersConversationsOnly() throws {
        try withOpenServer({ _ in }) { server in
            let client = try server.connect()
            defer { client.close() }
            try client.makeConversations(["hers"], members: ["ana"])
            try client.makeConversations(["other"], members: ["bob"])
            let since = try client.inbox("ana").activity
            let poll = try server.parkPoll("/v1/users/ana/events?since=\(since)&wait=30")
            defer { poll.close() }
            #expect(eventually { server.application.parkedLongPollCount == 1 })
            for _ in 0..<5 { try client.appendMessage("other", sender: "bob") }
            let posted = try client.appendMessage("hers", sender: "bob")
            let answer = try poll.receive()
            #expect(answer.status == 200)
            let feed = try answer.decode(InboxFeedBody.self)
            #expect(feed.events.map(\.conversationID) == ["hers"])
            #expect(feed.events.first?.last_message?.id == posted)
            // Only the post in her conversation woke it: the five in another
            // conversation cost it no read.
            #expect(server.application.longPollRereadCount == 1)
        }
    }

    /// Between two polls she joins one conversation and leaves another:
    /// her next poll is woken by the one she joined, not by the one she
    /// left (what the server kept of her conversations from the first poll
    /// was dropped by those changes).
    @Test func aNextPollFollowsMembershipsChangedBetweenPolls() throws {
        try withOpenServer({ _ in }) { server in
            let client = try server.connect()
            defer { client.close() }
            try client.makeConversations(["left"], members: ["ana"])
            try client.makeConversations(["joined"], members: ["bob"])
            let start = try client.inbox("ana").activity
            let first = try server.parkPoll("/v1/users/ana/events?since=\(start)&wait=30")
            defer { first.close() }
            #expect(eventually { server.application.parkedLongPollCount == 1 })
            try client.appendMessage("left", sender: "bob")
            let answered = try first.receive().decode(InboxFeedBody.self)
            #expect(answered.events.map(\.conversationID) == ["left"])

            #expect(try client.call(.put, "/v1/conversations/joined/members/ana", json: "{}").status == 201)
            #expect(try client.call(.delete, "/v1/conversations/left/members/ana").status == 200)
            let since = try client.inboxFeed("ana", since: answered.activity).activity
            let second = try server.parkPoll("/v1/users/ana/events?since=\(since)&wait=30")
            defer { second.close() }
            #expect(eventually { server.application.parkedLongPollCount == 1 })
            try client.appendMessage("left", sender: "bob")
            let posted = try client.appendMessage("joined", sender: "bob")
            let answer = try second.receive()
            #expect(answer.status == 200)
            let feed = try answer.decode(InboxFeedBody.self)
            #expect(feed.events.map(\.conversationID) == ["joined"])
            #expect(feed.events.first?.last_message?.id == posted)
            #expect(server.application.longPollRereadCount == 2, "the post where she left woke nothing")
        }
    }

    @Test func aParkedFeedNotWokenEndsAtItsWaitEmpty() throws {
        try withOpenServer({ _ in }) { server in
            let client = try server.connect()
            defer { client.close() }
            try client.makeConversations(["hers"], members: ["ana"])
            try client.makeConversations(["other"], members: ["bob"])
            let since = try client.inbox("ana").activity
            let started = ContinuousClock.now
            // A wait of 3 s: the poll must still be parked when this thread
            // looks, after however long a loaded machine held it.
            let poll = try server.parkPoll("/v1/users/ana/events?since=\(since)&wait=3")
            defer { poll.close() }
            #expect(eventually { server.application.parkedLongPollCount == 1 })
            try client.appendMessage("other", sender: "bob")
            let answer = try poll.receive()
            let elapsed = ContinuousClock.now - started
            #expect(answer.status == 200)
            let feed = try answer.decode(InboxFeedBody.self)
            #expect(feed.events.isEmpty && !feed.has_more)
            #expect(feed.activity >= since)
            #expect(elapsed >= .seconds(2.9), "answered after \(elapsed)")
        }
    }

    @Test func aRemovalAndAMarkerMovedElsewhereWakeTheFeed() throws {
        try withTokenServer { server, minter in
            let client = try server.connect()
            defer { client.close() }
            let olga = minter.user("olga"), mia = minter.user("mia")
            for id in ["c", "d"] {
                #expect(try client.createConversation(id, ownedBy: olga) == 201)
                #expect(try client.call(.put, "/v1/conversations/\(id)/members/mia", token: olga, json: "{}").status == 201)
            }
            let message = try client.call(.post, "/v1/conversations/c/messages", token: olga, json: #"{"body":"hi"}"#)
            let id = try message.decode(HistoryMessage.self).id

            // Her other device moves the marker.
            var since = try client.inbox("me", token: mia).activity
            let first = try server.parkPoll("/v1/users/me/events?since=\(since)&wait=30", token: mia)
            defer { first.close() }
            #expect(eventually { server.application.parkedLongPollCount == 1 })
            #expect(try client.markRead("me", in: "c", upTo: id, token: mia).status == 200)
            let moved = try first.receive().decode(InboxFeedBody.self)
            #expect(moved.events.map(\.conversationID) == ["c"])
            #expect(moved.events.first?.last_read_id == id && moved.events.first?.unread_count == 0)

            // The owner removes her from d.
            since = moved.activity
            let second = try server.parkPoll("/v1/users/mia/events?since=\(since)&wait=30", token: mia)
            defer { second.close() }
            #expect(eventually { server.application.parkedLongPollCount == 1 })
            #expect(try client.call(.delete, "/v1/conversations/d/members/mia", token: olga).status == 200)
            let removed = try second.receive()
            #expect(removed.status == 200)
            let feed = try removed.decode(InboxFeedBody.self)
            #expect(feed.events.map(\.type) == ["removed"])
            #expect(feed.events.first?.conversation_id == "d")
        }
    }

    @Test func inboxPollsCountAgainstTheClientsParkedPolls() throws {
        try withOpenServer({ $0.maximumParkedPollsPerClient = 2 }) { server in
            let client = try server.connect()
            defer { client.close() }
            try client.makeConversations(["c"], members: ["ana"])
            let since = try client.inbox("ana").activity
            let inbox = try server.parkPoll("/v1/users/ana/events?since=\(since)&wait=30")
            let conversation = try server.parkPoll("/v1/conversations/c/events?wait=30")
            defer { inbox.close(); conversation.close() }
            #expect(eventually { server.application.parkedLongPollCount == 2 })
            expectError(try client.get("/v1/users/ana/events?since=\(since)&wait=30"), 429, "too_many_requests")
            // Without a wait nothing parks, so nothing is refused.
            #expect(try client.get("/v1/users/ana/events?since=\(since)").status == 200)
        }
    }

    @Test func aClientThatGoesAwayReleasesItsInboxWait() throws {
        try withOpenServer({ _ in }) { server in
            let client = try server.connect()
            defer { client.close() }
            try client.makeConversations(["c"], members: ["ana"])
            let poll = try server.parkPoll("/v1/users/ana/events?since=\(try client.inbox("ana").activity)&wait=30")
            #expect(eventually { server.application.store.parkedWaitCount == 1 })
            poll.close()
            #expect(eventually { server.application.store.parkedWaitCount == 0 && server.application.parkedLongPollCount == 0 })
        }
    }

    @Test func shutdownAnswersParkedInboxPolls() throws {
        try withOpenServer({ _ in }) { server in
            let application = server.application
            let client = try server.connect()
            defer { client.close() }
            try client.makeConversations(["c"], members: ["ana"])
            let since = try client.inbox("ana").activity
            let poll = try server.parkPoll("/v1/users/ana/events?since=\(since)&wait=30")
            defer { poll.close() }
            #expect(eventually { application.store.parkedWaitCount == 1 })
            let stopped = Atomic<Bool>(false)
            application.shutdown(gracePeriod: .seconds(5)) { stopped.store(true, ordering: .releasing) }
            let answer = try poll.receive()
            #expect(answer.status == 200)
            let feed = try answer.decode(InboxFeedBody.self)
            #expect(feed.events.isEmpty && feed.activity == since)
            #expect(eventually { stopped.load(ordering: .acquiring) })
        }
    }
}
