import Foundation
import HistoryClient
import HistoryTestSupport
import Testing

/// The inbox endpoints over a real server: pages in last-message order with
/// exact unread counts, the read marker forward only, the inbox feed woken
/// by a post and resuming across a token refresh, and LiveInbox moving a row.
@Suite("ChatHistoryClient inbox against the server", .timeLimit(.minutes(2)))
struct InboxClientTests {
    /// Three conversations ana is in, one she is not, with bob's messages.
    static func seed(_ client: ChatHistoryClient) async throws -> [String: [Int64]] {
        var ids: [String: [Int64]] = [:]
        for (conversation, count) in [("quiet", 0), ("old", 2), ("busy", 3), ("other", 1)] {
            _ = try await client.createConversation(id: conversation)
            if conversation != "other" { _ = try await client.putMember("ana", in: conversation) }
            for index in 0..<count {
                ids[conversation, default: []].append(
                    try await client.append(to: conversation, sender: "bob", body: "\(conversation) \(index)").message.id)
            }
        }
        return ids
    }

    @Test func pagesComeInLastMessageOrderWithUnreadCounts() async throws {
        try await withRunningServer { server in
            let client = server.client
            let ids = try await Self.seed(client)
            let first = try await client.inbox(of: "ana", limit: 2)
            #expect(first.conversations.map(\.id) == ["busy", "old"])
            #expect(first.conversations[0].lastMessage?.id == ids["busy"]?.last)
            #expect(first.conversations[0].read == HistoryReadState(
                lastReadID: nil, firstUnreadID: ids["busy"]?.first, unreadCount: 3, unreadCapped: false))
            let cursor = try #require(first.nextCursor)
            let second = try await client.inbox(of: "ana", cursor: cursor, limit: 2)
            #expect(second.conversations.map(\.id) == ["quiet"])
            #expect(second.conversations[0].lastMessage == nil)
            #expect(second.nextCursor == nil)
            #expect(second.activity >= first.activity)
            await expectServerError(.invalidCursor, status: 400) {
                try await client.inbox(of: "ana", cursor: "not a cursor")
            }
            // Open mode has no token to say who "me" is.
            await expectServerError(.invalidUserID, status: 400) { try await client.inbox() }
        }
    }

    @Test func theMarkerMovesForwardOnlyAndClampsToTheNewest() async throws {
        try await withRunningServer { server in
            let client = server.client
            let ids = try await Self.seed(client)
            let busy = try #require(ids["busy"])
            let moved = try await client.markRead("busy", upTo: busy[0], as: "ana")
            #expect(moved == HistoryReadState(lastReadID: busy[0], firstUnreadID: busy[1], unreadCount: 2,
                                              unreadCapped: false))
            let back = try await client.markRead("busy", upTo: 0, as: "ana")
            #expect(back == moved)
            let past = try await client.markRead("busy", upTo: busy[2] + 1_000, as: "ana")
            #expect(past == HistoryReadState(lastReadID: busy[2], firstUnreadID: nil, unreadCount: 0,
                                             unreadCapped: false))
            let row = try await client.inbox(of: "ana").conversations.first { $0.id == "busy" }
            #expect(row?.read == past)
            await expectServerError(.memberNotFound, status: 404) {
                try await client.markRead("other", upTo: 1, as: "ana")
            }
        }
    }

    @Test func theInboxFeedYieldsAPostAndResumesAcrossATokenRefresh() async throws {
        try await withTokensModeServer { server in
            let admin = server.adminClient()
            for conversation in ["a", "b"] {
                _ = try await admin.createConversation(id: conversation)
                _ = try await admin.putMember("ana", in: conversation)
            }
            let tokens = ScriptedTokens([TokensModeServer.token(subject: "ana")])
            // Long-polls: each poll asks for a token (an open stream asks once).
            let ana = server.client(wait: .seconds(1), feedTransport: .longPoll, provider: tokens.provider)
            let page = try await ana.inbox()
            #expect(Set(page.conversations.map(\.id)) == ["a", "b"])
            let collector = Collector<HistoryInboxEvent>()
            let consumer = Task {
                for try await event in ana.inboxFeed(since: page.activity) {
                    await collector.append(event)
                }
            }
            let first = try await admin.append(to: "a", sender: "bob", body: "one").message
            let delivered = await collector.waitFor(count: 1)
            #expect(delivered.map(\.conversationID) == ["a"])
            if case .updated(let row) = delivered.first {
                #expect(row.lastMessage == first && row.read.unreadCount == 1)
            } else {
                Issue.record("expected an updated row, got \(delivered)")
            }
            // The next poll goes out with an expired token: the feed refreshes
            // it and carries on from the activity it yielded last.
            let callsBefore = tokens.calls
            tokens.script([TokensModeServer.token(subject: "ana", expiresIn: -3600),
                           TokensModeServer.token(subject: "ana")])
            // The parked poll ends after its 1 s wait; the next one is refused
            // and asked again with the fresh token: only then post.
            #expect(await eventually { tokens.calls >= callsBefore + 2 })
            let second = try await admin.append(to: "b", sender: "bob", body: "two").message
            let events = await collector.waitFor(count: 2)
            consumer.cancel()
            #expect(events.map(\.conversationID) == ["a", "b"])
            #expect(events[1].activity > events[0].activity)
            if case .updated(let row) = events.last { #expect(row.lastMessage == second) }
            // Another user's inbox is not ana's to read.
            await expectServerError(.forbidden, status: 403) { try await ana.inbox(of: "bob") }
        }
    }

    @Test func liveInboxMovesARowToTheTopWhenAMessageArrives() async throws {
        let configuration = HistoryClientConfiguration(eventWait: .seconds(2))
        try await withRunningServer(clientConfiguration: configuration) { server in
            let client = server.client
            _ = try await Self.seed(client)
            let live = LiveInbox(client: client, user: "ana", configuration: InboxConfiguration(pageSize: 2))
            let opened = try await live.perform(.open)
            #expect(opened.inbox.rows.map(\.id) == ["busy", "old"])
            let updates = Collector<LiveInbox.Update>()
            let follower = Task {
                try await live.followChanges { update in await updates.append(update) }
            }
            let posted = try await client.append(to: "old", sender: "bob", body: "news").message
            let received = await updates.waitFor(count: 1)
            follower.cancel()
            _ = await follower.result
            #expect(received.first?.changes == [.moved(conversationID: "old", from: 1, to: 0)])
            #expect(received.first?.inbox.rows.first?.lastMessage == posted)
            let more = try await live.perform(.scrollDown)
            #expect(more.inbox.rows.map(\.id) == ["old", "busy", "quiet"])
            #expect(!more.inbox.hasMore)
        }
    }
}
