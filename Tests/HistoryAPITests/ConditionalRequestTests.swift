import Foundation
import HTTPCore
@testable import HistoryAPI
import Dispatch
import HistoryAccess
import HistorySQLite
import HistoryStore
import HistoryTestSupport
import Testing

/// docs/API.md, "Conditional requests and compression", over real sockets
/// (on PostgreSQL too with `HISTORY_TEST_STORE=postgres`): `ETag` and
/// `If-None-Match` on every resource and page.
@Suite("API: ETag and If-None-Match")
struct ConditionalRequestTests {
    /// A conversation "c" of `count` messages (each ~40 bytes of body), their ids ascending.
    private func seed(_ client: HTTPClientConnection, count: Int) throws -> [Int64] {
        try client.createConversation("c")
        return try (0..<count).map { index in
            try client.appendMessage("c", body: "message number \(index) with some text in it")
        }
    }

    private func get(_ client: HTTPClientConnection, _ target: String,
                     _ headers: [(String, String)] = []) throws -> HTTPClientResponse {
        try client.call(.get, target, headers: headers)
    }

    @Test func aPageHasAStableETagAndA304WhenItMatches() throws {
        try withRunningServer(client: { client in
            _ = try seed(client, count: 60)
            let first = try get(client, "/v1/conversations/c/messages?limit=50")
            let tag = try #require(first.headers["ETag"])
            #expect(tag.hasPrefix("\"") && tag.hasSuffix("\"") && !tag.hasPrefix("W/"))
            #expect(first.headers.values(of: "Vary").contains("Accept-Encoding"))
            let again = try get(client, "/v1/conversations/c/messages?limit=50")
            #expect(again.headers["ETag"] == tag)
            #expect(again.body == first.body)

            for condition in [tag, "*", "\"other\", \(tag)", "W/\(tag)", "\"a\",W/\(tag) , \"b\""] {
                let cached = try get(client, "/v1/conversations/c/messages?limit=50", [("If-None-Match", condition)])
                #expect(cached.status == 304, "\(condition)")
                #expect(cached.body.isEmpty)
                #expect(cached.headers["ETag"] == tag)
                #expect(cached.headers.values(of: "Vary").contains("Accept-Encoding"))
                #expect(cached.headers["Content-Length"] == nil)
            }
            for condition in ["\"other\"", "W/\"other\"", "garbage", String(tag.dropLast())] {
                let fresh = try get(client, "/v1/conversations/c/messages?limit=50", [("If-None-Match", condition)])
                #expect(fresh.status == 200, "\(condition)")
                #expect(fresh.body == first.body)
            }
            // Another query of the same conversation is another page: another tag.
            let smaller = try get(client, "/v1/conversations/c/messages?limit=49", [("If-None-Match", tag)])
            #expect(smaller.status == 200)
            #expect(smaller.headers["ETag"] != tag)
            // The connection is still in step after the bodiless 304s.
            #expect(try client.get("/healthz").status == 200)
        })
    }

    @Test func oneMessageAndAJumpByTimeCarryETagsThatFollowTheirChanges() throws {
        try withRunningServer(client: { client in
            let ids = try seed(client, count: 5)
            let one = "/v1/conversations/c/messages/\(ids[2])"
            let first = try get(client, one)
            let tag = try #require(first.headers["ETag"])
            #expect(try get(client, one, [("If-None-Match", tag)]).status == 304)
            // Another message of the same conversation has its own tag.
            #expect(try get(client, "/v1/conversations/c/messages/\(ids[3])").headers["ETag"] != tag)
            // An append elsewhere leaves the message's bytes, and its tag, as they were.
            _ = try client.appendMessage("c", body: "later")
            #expect(try get(client, one, [("If-None-Match", tag)]).status == 304)
            #expect(try client.patch(one, #"{"body":"edited"}"#).status == 200)
            let edited = try get(client, one, [("If-None-Match", tag)])
            #expect(edited.status == 200 && edited.bodyText.contains("edited"))
            let editedTag = try #require(edited.headers["ETag"])
            #expect(editedTag != tag)
            #expect(try client.delete(one).status == 200)
            let tombstone = try get(client, one, [("If-None-Match", editedTag)])
            #expect(tombstone.status == 200 && tombstone.headers["ETag"] != editedTag)

            let jump = "/v1/conversations/c/messages?around_time=1970-01-01T00:00:00Z&limit=3"
            let jumped = try get(client, jump)
            let jumpTag = try #require(jumped.headers["ETag"])
            #expect(try get(client, jump, [("If-None-Match", jumpTag)]).status == 304)
            // The same anchor asked by id is another query, so another tag.
            #expect(try get(client, "/v1/conversations/c/messages?around=\(ids[0])&limit=3").headers["ETag"] != jumpTag)
        })
    }

    @Test func anEditOrADeleteInsideAPageChangesItsETag() throws {
        try withRunningServer(client: { client in
            let ids = try seed(client, count: 40)
            let deep = "/v1/conversations/c/messages?limit=10&before=\(ids[20])"
            let original = try get(client, deep)
            let originalTag = try #require(original.headers["ETag"])

            #expect(try client.patch("/v1/conversations/c/messages/\(ids[15])", #"{"body":"edited"}"#).status == 200)
            let edited = try get(client, deep, [("If-None-Match", originalTag)])
            #expect(edited.status == 200)
            let editedTag = try #require(edited.headers["ETag"])
            #expect(editedTag != originalTag)
            #expect(edited.bodyText.contains("edited"))

            #expect(try client.delete("/v1/conversations/c/messages/\(ids[12])").status == 200)
            let deleted = try get(client, deep, [("If-None-Match", editedTag)])
            #expect(deleted.status == 200)
            #expect(deleted.headers["ETag"] != editedTag)
            #expect(try get(client, deep, [("If-None-Match", deleted.headers["ETag"] ?? "")]).status == 304)
        })
    }

    /// The page shows the conversation's `version`, which every append
    /// bumps: the bytes of every page change, so every tag must. (A deep
    /// page's messages are unchanged; only `version` moved.)
    @Test func anAppendChangesTheNewestPageAndTheVersionEveryPageShows() throws {
        try withRunningServer(client: { client in
            let ids = try seed(client, count: 30)
            let newest = try get(client, "/v1/conversations/c/messages?limit=10")
            let deep = try get(client, "/v1/conversations/c/messages?limit=10&before=\(ids[10])")
            try client.appendMessage("c", body: "one more")
            let newestAfter = try get(client, "/v1/conversations/c/messages?limit=10",
                                      [("If-None-Match", newest.headers["ETag"] ?? "")])
            #expect(newestAfter.status == 200)
            #expect(newestAfter.bodyText.contains("one more"))
            #expect(newestAfter.headers["ETag"] != newest.headers["ETag"])
            let deepAfter = try get(client, "/v1/conversations/c/messages?limit=10&before=\(ids[10])",
                                    [("If-None-Match", deep.headers["ETag"] ?? "")])
            #expect(deepAfter.status == 200)
            #expect(try deepAfter.messageIDs() == (try deep.messageIDs()))
            #expect(deepAfter.body != deep.body)
            #expect(deepAfter.headers["ETag"] != deep.headers["ETag"])
        })
    }

    @Test func theConversationMembersAndInboxTagsChangeWithThem() throws {
        try withRunningServer(client: { client in
            try client.createConversation("c")
            #expect(try client.call(.put, "/v1/conversations/c/members/ana", json: "{}").status == 201)
            let targets = ["/v1/conversations/c", "/v1/conversations/c/members", "/v1/users/ana/conversations"]
            func tags() throws -> [String] {
                try targets.map { target in
                    let response = try get(client, target)
                    #expect(response.status == 200, "\(target): \(response.bodyText)")
                    let tag = try #require(response.headers["ETag"], "\(target)")
                    #expect(try get(client, target, [("If-None-Match", tag)]).status == 304, "\(target)")
                    return tag
                }
            }
            let start = try tags()
            #expect(try tags() == start)

            let id = try client.appendMessage("c", body: "hi")
            let appended = try tags()
            #expect(appended[0] != start[0])
            #expect(appended[1] == start[1])
            #expect(appended[2] != start[2])

            #expect(try client.call(.put, "/v1/conversations/c/members/bob", json: "{}").status == 201)
            let joined = try tags()
            #expect(joined[0] == appended[0])
            #expect(joined[1] != appended[1])

            #expect(try client.call(.put, "/v1/conversations/c/members/ana/read",
                                    json: #"{"last_read_id":\#(id)}"#).status == 200)
            let read = try tags()
            #expect(read[2] != joined[2])

            #expect(try client.call(.delete, "/v1/conversations/c/members/bob").status == 200)
            #expect(try tags()[1] != joined[1])
        })
    }

    /// HEAD answers the GET's headers: the same `ETag`, and a 304 too.
    @Test func headCarriesTheSameETag() throws {
        try withRunningServer(client: { client in
            _ = try seed(client, count: 5)
            let full = try get(client, "/v1/conversations/c/messages")
            let tag = try #require(full.headers["ETag"])
            let head = try client.call(.head, "/v1/conversations/c/messages")
            #expect(head.status == 200 && head.body.isEmpty)
            #expect(head.headers["ETag"] == tag)
            let conditional = try client.call(.head, "/v1/conversations/c/messages", headers: [("If-None-Match", tag)])
            #expect(conditional.status == 304)
        })
    }

    /// Access is decided before any 304: two members see one page (one
    /// tag), a removed member gets 404 with the tag it held.
    @Test func accessIsDecidedBeforeA304() throws {
        try withTokenServer { server, minter in
            let client = try server.connect()
            defer { client.close() }
            let ana = minter.user("ana"), bob = minter.user("bob")
            #expect(try client.createConversation("t", ownedBy: ana) == 201)
            #expect(try client.call(.put, "/v1/conversations/t/members/bob", token: ana, json: "{}").status == 201)
            #expect(try client.call(.post, "/v1/conversations/t/messages", token: ana, json: #"{"body":"x"}"#).status == 201)
            let page = try client.call(.get, "/v1/conversations/t/messages", token: ana)
            let tag = try #require(page.headers["ETag"])
            let asBob = try client.call(.get, "/v1/conversations/t/messages", token: bob, headers: [("If-None-Match", tag)])
            #expect(asBob.status == 304)
            #expect(try client.call(.delete, "/v1/conversations/t/members/bob", token: ana).status == 200)
            let removed = try client.call(.get, "/v1/conversations/t/messages", token: bob, headers: [("If-None-Match", tag)])
            expectError(removed, 404, "conversation_not_found")
            let stranger = try client.call(.get, "/v1/conversations/t/messages", token: minter.user("eve"),
                                           headers: [("If-None-Match", "*")])
            expectError(stranger, 404, "conversation_not_found")
        }
    }

    /// A page's 304 comes from the conversation's counters: with every page
    /// read of the conversation held at a gate, it still answers, and no
    /// page read began. (The tag is the server's own formula, checked
    /// against the answer once the gate opens.)
    @Test func aPage304ReadsNoMessage() throws {
        try withTemporaryDirectory { directory in
            let sqlite = try SQLiteHistoryStore(configuration: SQLiteStoreConfiguration(path: directory.databasePath,
                                                                                  durability: .normal))
            let store = GatedStore(sqlite, gating: ConversationID("c")!)
            defer { store.close() }
            try withInProcessServer(store, beforeShutdown: { store.open() }) { port, _ in
                let client = try HTTPClientConnection(port: port)
                defer { client.close() }
                _ = try seed(client, count: 3)
                let version = try store.conversation(ConversationID("c")!).version
                let tag = EntityTag.page(of: ConversationID("c")!, version: version, query: PageQuery(),
                                         budget: ClientLimits().maximumResponseBytes, gzip: false).value

                let cached = try get(client, "/v1/conversations/c/messages", [("If-None-Match", tag)])
                #expect(cached.status == 304)
                #expect(store.enteredCount == 0)
                store.open()
                let read = try get(client, "/v1/conversations/c/messages")
                #expect(read.status == 200)
                #expect(read.headers["ETag"] == tag)
                #expect(store.enteredCount == 1)
            }
        }
    }
}
