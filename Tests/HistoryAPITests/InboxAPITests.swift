import HistoryTestSupport
import Foundation
import HTTPCore
import HistoryAPI
import HistoryClient
import HistoryStore
import HistoryWiring
import Testing

/// `GET /v1/users/{uid}/conversations` over real sockets: order, row
/// contents, unread counts, keyset paging, the response budget, `me`, and
/// who may read whose inbox.
@Suite struct InboxAPITests {
    @Test func rowsAreOrderedByLastMessageWithExactUnreadCounts() throws {
        try withOpenServer({ _ in }) { server in
            let client = try server.connect()
            defer { client.close() }
            try client.makeConversations(["a", "b", "c"], members: ["ana"])
            try client.makeConversations(["elsewhere"], members: ["bob"])
            let fromBob = try client.appendMessage("a", sender: "bob")
            let inB = try client.appendMessage("b", sender: "bob")
            let own = try client.appendMessage("a", sender: "ana")
            try client.appendMessage("elsewhere", sender: "bob")

            let page = try client.inbox("ana")
            #expect(page.ids == ["a", "b", "c"])
            #expect(page.next_cursor == nil)
            let a = page.conversations[0], b = page.conversations[1], c = page.conversations[2]
            #expect(a.last_message?.id == own)
            #expect(a.conversation.newest_id == own && a.conversation.message_count == 2)
            // Her own message is not unread; bob's is, and is where she opens.
            #expect(a.unread_count == 1 && a.first_unread_id == fromBob && !a.unread_capped)
            #expect(b.last_message?.id == inB && b.unread_count == 1 && b.first_unread_id == inB)
            #expect(c.last_message == nil && c.unread_count == 0 && c.first_unread_id == nil)
            #expect(page.conversations.allSatisfy { $0.role == "member" && $0.last_read_id == nil })
            #expect(page.conversations.allSatisfy { $0.activity <= page.activity })
        }
    }

    @Test func theWireFormHasEveryKeyOfTheContract() throws {
        try withOpenServer({ _ in }) { server in
            let client = try server.connect()
            defer { client.close() }
            try client.makeConversations(["a", "quiet"], members: ["ana"])
            try client.appendMessage("a", sender: "bob")
            let tree = try client.call(.get, "/v1/users/ana/conversations").decode(JSONTree.self)
            #expect(tree.keys == ["conversations", "next_cursor", "activity"])
            #expect(tree["next_cursor"] == .null)
            let rowKeys: Set<String> = ["conversation", "role", "last_message", "last_read_id", "first_unread_id",
                                        "unread_count", "unread_capped", "activity"]
            for row in tree["conversations"]?.elements ?? [] {
                #expect(row.keys == rowKeys)
                #expect(row["conversation"]?.keys == ["id", "title", "created_at", "message_count", "oldest_id",
                                                       "newest_id", "version"])
            }
            #expect(tree["conversations"]?.elements.last?["last_message"] == .null)
            #expect(tree["conversations"]?.elements.first?["last_read_id"] == .null)
        }
    }

    @Test func unreadIsExactTo999AndCappedAt1000() throws {
        try withOpenServer({ _ in }) { server in
            let client = try server.connect()
            defer { client.close() }
            try client.makeConversations(["big"], members: ["ana"])
            let ids = try #require(try server.application.store.bulkLoad((0..<1000).map { NewMessage(sender: "bob", body: "m\($0)") },
                                                        to: ConversationID("big")!))
            let row = try #require(try client.inbox("ana").conversations.first)
            #expect(row.unread_count == 999 && row.unread_capped)
            #expect(row.first_unread_id == ids.lowerBound)

            // 999 left above the marker: exact, not capped.
            let moved = try client.markRead("ana", in: "big", upTo: ids.lowerBound)
            #expect(moved.status == 200)
            #expect(try moved.decode(ReadStateBody.self)
                    == ReadStateBody(last_read_id: ids.lowerBound, first_unread_id: ids.lowerBound + 1,
                                     unread_count: 999, unread_capped: false))
            let next = try client.markRead("ana", in: "big", upTo: ids.lowerBound + 1).decode(ReadStateBody.self)
            #expect(next.unread_count == 998 && !next.unread_capped)
        }
    }

    @Test func deletedMessagesAreNotUnread() throws {
        try withOpenServer({ _ in }) { server in
            let client = try server.connect()
            defer { client.close() }
            try client.makeConversations(["d"], members: ["ana"])
            let gone = try client.appendMessage("d", sender: "bob")
            let kept = try client.appendMessage("d", sender: "bob")
            #expect(try client.delete("/v1/conversations/d/messages/\(gone)").status == 200)
            let row = try #require(try client.inbox("ana").conversations.first)
            #expect(row.unread_count == 1 && row.first_unread_id == kept)
            // The last message is the newest, tombstone or not.
            #expect(try client.delete("/v1/conversations/d/messages/\(kept)").status == 200)
            let after = try #require(try client.inbox("ana").conversations.first)
            #expect(after.last_message?.id == kept && after.last_message?.deleted == true)
            #expect(after.unread_count == 0 && after.first_unread_id == nil)
        }
    }

    @Test func pagesWalkEveryConversationOnceEvenWhenOneMovesToTheTop() throws {
        try withOpenServer({ _ in }) { server in
            let client = try server.connect()
            defer { client.close() }
            try client.makeConversations(["a", "b", "c", "empty1", "empty2"], members: ["ana"])
            for id in ["c", "b", "a"] { try client.appendMessage(id, sender: "bob") }
            let first = try client.inbox("ana", "limit=2")
            #expect(first.ids == ["a", "b"])
            let cursor = try #require(first.next_cursor)
            // `b` moves to the top: it is not repeated below the cursor.
            try client.appendMessage("b", sender: "bob")
            var seen = first.ids
            var next: String? = cursor
            while let position = next {
                let page = try client.inbox("ana", "limit=2&cursor=\(position.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)")
                seen += page.ids
                next = page.next_cursor
            }
            #expect(seen == ["a", "b", "c", "empty1", "empty2"])
            #expect(try client.inbox("ana").ids == ["b", "a", "c", "empty1", "empty2"])
        }
    }

    @Test func aPageStopsBeforeTheResponseBudgetAndItsCursorContinuesExactly() throws {
        let budget = 4096
        try withOpenServer({ $0.maximumResponseBytes = budget }) { server in
            let client = try server.connect()
            defer { client.close() }
            let ids = (0..<7).map { "c\($0)" }
            try client.makeConversations(ids, members: ["ana"])
            for id in ids.reversed() { try client.appendMessage(id, sender: "bob", body: String(repeating: "x", count: 1000)) }
            var seen: [String] = []
            var query = "limit=50"
            var pages = 0
            while true {
                let response = try client.call(.get, "/v1/users/ana/conversations?\(query)")
                #expect(response.status == 200)
                #expect(response.body.count <= budget, "\(response.body.count) bytes")
                let page = try response.decode(InboxPageBody.self)
                #expect(!page.conversations.isEmpty)
                seen += page.ids
                pages += 1
                guard let next = page.next_cursor else { break }
                query = "limit=50&cursor=\(next.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)"
            }
            #expect(seen == ids)
            #expect(pages > 1)
        }
    }

    @Test func meIsTheTokensSubjectAndAnotherUsersInboxIsForbidden() throws {
        try withTokenServer { server, minter in
            let client = try server.connect()
            defer { client.close() }
            let mia = minter.user("mia")
            #expect(try client.createConversation("c", ownedBy: mia) == 201)
            #expect(try client.inbox("me", token: mia).ids == ["c"])
            #expect(try client.inbox("mia", token: mia).conversations.first?.role == "owner")
            expectError(try client.call(.get, "/v1/users/zed/conversations", token: mia), 403, "forbidden")
            expectError(try client.call(.get, "/v1/users/zed/events", token: mia), 403, "forbidden")
            // Another user's inbox is forbidden even when it is empty.
            expectError(try client.call(.get, "/v1/users/nobody/conversations", token: mia), 403, "forbidden")
            // An admin reads anyone's; its own `me` is its subject.
            #expect(try client.inbox("mia", token: minter.admin()).ids == ["c"])
            #expect(try client.inbox("me", token: minter.admin()).ids.isEmpty)
        }
    }

    @Test func openModeNamesUsersAndHasNoMe() throws {
        try withOpenServer({ _ in }) { server in
            let client = try server.connect()
            defer { client.close() }
            try client.makeConversations(["c"], members: ["ana@example.com"])
            #expect(try client.inbox("ana@example.com").ids == ["c"])
            #expect(try client.inbox("nobody").ids.isEmpty)
            for path in ["/v1/users/me/conversations", "/v1/users/me/events"] {
                let answer = try client.get(path)
                expectError(answer, 400, "invalid_user_id")
                #expect((try? answer.decode(ContractErrorBody.self))?.error.message.contains("token") == true)
            }
        }
    }

    @Test(arguments: [
        ("/v1/users/bad%20id/conversations", "invalid_user_id"),
        ("/v1/users/\(String(repeating: "u", count: 65))/conversations", "invalid_user_id"),
        ("/v1/users/ana/conversations?limit=0", "invalid_limit"),
        ("/v1/users/ana/conversations?limit=201", "invalid_limit"),
        ("/v1/users/ana/conversations?limit=x", "invalid_limit"),
        ("/v1/users/ana/conversations?limit=1&limit=2", "invalid_limit"),
        ("/v1/users/ana/conversations?cursor=", "invalid_cursor"),
        ("/v1/users/ana/conversations?cursor=not-a-cursor", "invalid_cursor"),
        ("/v1/users/ana/conversations?cursor=%25%25", "invalid_cursor"),
        ("/v1/users/ana/conversations?cursor=\(String(repeating: "A", count: 300))", "invalid_cursor"),
    ])
    func invalidInboxRequests(_ target: String, _ code: String) throws {
        try withOpenServer({ _ in }) { server in
            let client = try server.connect()
            defer { client.close() }
            try client.makeConversations(["c"], members: ["ana"])
            expectError(try client.get(target), 400, code)
        }
    }

    @Test func otherMethodsAre405WithAllow() throws {
        try withOpenServer({ _ in }) { server in
            let client = try server.connect()
            defer { client.close() }
            for (method, target, allow) in [(HTTPMethod.post, "/v1/users/ana/conversations", "GET, HEAD"),
                                            (.delete, "/v1/users/ana/events", "GET, HEAD"),
                                            (.get, "/v1/conversations/c/members/ana/read", "PUT"),
                                            (.post, "/v1/conversations/c/members/ana/read", "PUT")] {
                let answer = try client.call(method, target, json: method == .post ? "{}" : nil)
                expectError(answer, 405, "method_not_allowed")
                #expect(answer.headers["Allow"] == allow, "\(method) \(target)")
            }
        }
    }

    @Test func inboxRoutesAreCountedUnderTheirPatterns() throws {
        try withOpenServer({ _ in }) { server in
            let client = try server.connect()
            defer { client.close() }
            try client.makeConversations(["c"], members: ["ana"])
            _ = try client.inbox("ana")
            _ = try client.inboxFeed("ana", since: 0)
            #expect(try client.markRead("ana", in: "c", upTo: 1).status == 200)
            let routes = ["GET /v1/users/{uid}/conversations", "GET /v1/users/{uid}/events",
                          "PUT /v1/conversations/{cid}/members/{uid}/read"]
            // An exchange is counted once its answer is written: maybe just after the client read it.
            let counted = eventually {
                let metrics = (try? client.get("/metrics").bodyText) ?? ""
                return routes.allSatisfy { metrics.contains(#"route="\#($0)",method="#) }
            }
            #expect(counted)
        }
    }

    @Test func readsAreLimitedAsReadsAndTheMarkerAsAWrite() throws {
        try withOpenServer({ $0.rateLimitReads = 100; $0.rateLimitWrites = 3 }) { server in
            let client = try server.connect()
            defer { client.close() }
            try client.makeConversations(["c"], members: ["ana"])
            let read = try client.call(.get, "/v1/users/ana/conversations")
            let feed = try client.call(.get, "/v1/users/ana/events")
            let write = try client.markRead("ana", in: "c", upTo: 1)
            #expect(read.headers["RateLimit-Limit"] == "200")
            #expect(feed.headers["RateLimit-Limit"] == "200")
            #expect(write.headers["RateLimit-Limit"] == "6")
        }
    }
}
