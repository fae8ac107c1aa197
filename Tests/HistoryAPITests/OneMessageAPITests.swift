import HistoryTestSupport
import Foundation
import HTTPCore
import Testing

/// `GET /v1/conversations/{cid}/messages/{id}` over real sockets
/// (docs/API.md, "Live"): the message, its tombstone, and every refusal.
@Suite struct OneMessageAPITests {
    @Test func aMessageIsAnsweredAsPostedThenAsItsTombstone() throws {
        try withRunningServer { server in
            let client = try server.connect()
            defer { client.close() }
            try client.createConversation("general")
            let posted = try client.appendRaw("general", body: "hello there")
            let read = try client.get("/v1/conversations/general/messages/\(posted.id)")
            #expect(read.status == 200)
            #expect(try read.decode(RawMessageBody.self) == posted)

            let edited = try client.patch("/v1/conversations/general/messages/\(posted.id)", #"{"body":"edited"}"#)
            #expect(edited.status == 200)
            #expect(try client.get("/v1/conversations/general/messages/\(posted.id)").decode(RawMessageBody.self).body == "edited")

            #expect(try client.delete("/v1/conversations/general/messages/\(posted.id)").status == 200)
            let tombstone = try client.get("/v1/conversations/general/messages/\(posted.id)")
            #expect(tombstone.status == 200)
            let body = try tombstone.decode(RawMessageBody.self)
            #expect(body.deleted && body.body.isEmpty && body.id == posted.id && body.created_at == posted.created_at)

            // HEAD: the GET's status and length, no body.
            let head = try client.request(HTTPRequest(method: .head, target: "/v1/conversations/general/messages/\(posted.id)",
                                                      headers: ["Host": "127.0.0.1"]))
            #expect(head.status == 200 && head.body.isEmpty)
            #expect(head.headers["Content-Length"] == "\(tombstone.body.count)")
        }
    }

    @Test func anIDOfAnotherConversationOrNoneIsMessageNotFound() throws {
        try withRunningServer { server in
            let client = try server.connect()
            defer { client.close() }
            try client.createConversation("general")
            try client.createConversation("random")
            let elsewhere = try client.appendMessage("random")
            let here = try client.appendMessage("general")
            expectError(try client.get("/v1/conversations/general/messages/\(elsewhere)"), 404, "message_not_found")
            expectError(try client.get("/v1/conversations/general/messages/\(here + 1000)"), 404, "message_not_found")
            expectError(try client.get("/v1/conversations/nowhere/messages/\(here)"), 404, "conversation_not_found")
            for bad in ["abc", "0", "-1", "1.5", "99999999999999999999"] {
                expectError(try client.get("/v1/conversations/general/messages/\(bad)"), 400, "invalid_message_id")
            }
        }
    }

    @Test func aStrangerGetsTheAnswerOfAMissingConversation() throws {
        try withTokenServer { server, minter in
            let client = try server.connect()
            defer { client.close() }
            let ana = minter.user("ana"), eve = minter.user("eve")
            #expect(try client.createConversation("private", ownedBy: ana) == 201)
            let posted = try client.call(.post, "/v1/conversations/private/messages", token: ana, json: #"{"body":"secret"}"#)
            #expect(posted.status == 201)
            let id = try posted.decode(RawMessageBody.self).id
            #expect(try client.call(.get, "/v1/conversations/private/messages/\(id)", token: ana).status == 200)
            let stranger = try client.call(.get, "/v1/conversations/private/messages/\(id)", token: eve)
            let missing = try client.call(.get, "/v1/conversations/missing/messages/\(id)", token: eve)
            expectError(stranger, 404, "conversation_not_found")
            // Byte for byte the same but for the id it names (as long as "private").
            #expect(stranger.bodyText.replacingOccurrences(of: "private", with: "missing") == missing.bodyText)
            // A stranger learns nothing about ids either.
            expectError(try client.call(.get, "/v1/conversations/private/messages/\(id + 1000)", token: eve),
                        404, "conversation_not_found")
        }
    }
}
