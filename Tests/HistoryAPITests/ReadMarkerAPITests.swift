import HistoryTestSupport
import Foundation
import HTTPCore
import HistoryAPI
import HistoryClient
import HistoryStore
import Testing

/// `PUT /v1/conversations/{cid}/members/{uid}/read` over real sockets:
/// forward only, clamped to `newest_id`, and who may move whose marker.
@Suite struct ReadMarkerAPITests {
    @Test func aMarkerPastTheNewestMessageIsClampedToIt() throws {
        try withOpenServer({ _ in }) { server in
            let client = try server.connect()
            defer { client.close() }
            try client.makeConversations(["c"], members: ["ana"])
            for _ in 0..<3 { try client.appendMessage("c", sender: "bob") }
            let newest = try client.appendMessage("c", sender: "bob")
            let answer = try client.markRead("ana", in: "c", upTo: 1_000_000_000)
            #expect(answer.status == 200)
            #expect(try answer.decode(ReadStateBody.self)
                    == ReadStateBody(last_read_id: newest, first_unread_id: nil, unread_count: 0, unread_capped: false))
            #expect(try answer.decode(JSONTree.self).keys == ["last_read_id", "first_unread_id", "unread_count", "unread_capped"])
            let row = try #require(try client.inbox("ana").conversations.first)
            #expect(row.last_read_id == newest && row.unread_count == 0)
        }
    }

    @Test func aMarkerMovedBackChangesNothing() throws {
        try withOpenServer({ _ in }) { server in
            let client = try server.connect()
            defer { client.close() }
            try client.makeConversations(["c"], members: ["ana"])
            let first = try client.appendMessage("c", sender: "bob")
            let second = try client.appendMessage("c", sender: "bob")
            let third = try client.appendMessage("c", sender: "bob")
            let forward = try client.markRead("ana", in: "c", upTo: second).decode(ReadStateBody.self)
            #expect(forward == ReadStateBody(last_read_id: second, first_unread_id: third, unread_count: 1, unread_capped: false))
            let activity = try client.inbox("ana").activity
            for lower in [first, second, 0] {
                let back = try client.markRead("ana", in: "c", upTo: lower)
                #expect(back.status == 200)
                #expect(try back.decode(ReadStateBody.self) == forward, "last_read_id \(lower)")
            }
            // Nothing was written: the server's activity did not move.
            #expect(try client.inbox("ana").activity == activity)
            #expect(try client.inboxFeed("ana", since: activity).events.isEmpty)
        }
    }

    @Test func aMarkerInAConversationWithoutMessagesStaysNull() throws {
        try withOpenServer({ _ in }) { server in
            let client = try server.connect()
            defer { client.close() }
            try client.makeConversations(["quiet"], members: ["ana"])
            let answer = try client.markRead("ana", in: "quiet", upTo: 7)
            #expect(answer.status == 200)
            #expect(try answer.decode(ReadStateBody.self)
                    == ReadStateBody(last_read_id: nil, first_unread_id: nil, unread_count: 0, unread_capped: false))
        }
    }

    @Test(arguments: [
        (#"{"last_read_id":-1}"#, 400, "invalid_message_id"),
        (#"{"last_read_id":1.5}"#, 400, "invalid_message_id"),
        (#"{"last_read_id":1e3}"#, 400, "invalid_message_id"),
        (#"{"last_read_id":"3"}"#, 400, "invalid_message_id"),
        (#"{"last_read_id":null}"#, 400, "invalid_message_id"),
        (#"{"last_read_id":99999999999999999999}"#, 400, "invalid_message_id"),
        (#"{}"#, 400, "invalid_message_id"),
        (#"[1]"#, 400, "invalid_json"),
        (#"{"last_read_id":"#, 400, "invalid_json"),
        ("", 400, "invalid_json"),
    ])
    func invalidBodies(_ json: String, _ status: Int, _ code: String) throws {
        try withOpenServer({ _ in }) { server in
            let client = try server.connect()
            defer { client.close() }
            try client.makeConversations(["c"], members: ["ana"])
            expectError(try client.call(.put, "/v1/conversations/c/members/ana/read", json: json), status, code)
        }
    }

    @Test func pathsAndMediaTypesAreChecked() throws {
        try withOpenServer({ _ in }) { server in
            let client = try server.connect()
            defer { client.close() }
            try client.makeConversations(["c"], members: ["ana"])
            let body = #"{"last_read_id":1}"#
            expectError(try client.call(.put, "/v1/conversations/c/members/ana/read", json: body,
                                        headers: [("Content-Type", "text/plain")]), 415, "unsupported_media_type")
            expectError(try client.call(.put, "/v1/conversations/nope/members/ana/read", json: body), 404, "conversation_not_found")
            expectError(try client.call(.put, "/v1/conversations/c/members/bad%20id/read", json: body), 400, "invalid_user_id")
            expectError(try client.call(.put, "/v1/conversations/c/members/me/read", json: body), 400, "invalid_user_id")
            // Open mode acts as an admin: it learns that the user is no member.
            expectError(try client.call(.put, "/v1/conversations/c/members/zed/read", json: body), 404, "member_not_found")
        }
    }

    @Test func aUserMovesOnlyItsOwnMarkerInItsOwnConversations() throws {
        try withTokenServer { server, minter in
            let client = try server.connect()
            defer { client.close() }
            let olga = minter.user("olga")
            #expect(try client.createConversation("c", ownedBy: olga) == 201)
            #expect(try client.call(.put, "/v1/conversations/c/members/mia", token: olga, json: "{}").status == 201)
            let message = try client.call(.post, "/v1/conversations/c/messages", token: olga, json: #"{"body":"hi"}"#)
            let id = try message.decode(HistoryMessage.self).id
            let mia = minter.user("mia")

            let own = try client.markRead("me", in: "c", upTo: id, token: mia)
            #expect(own.status == 200)
            #expect(try own.decode(ReadStateBody.self).last_read_id == id)
            #expect(try client.markRead("mia", in: "c", upTo: id, token: mia).status == 200)
            // Even an owner may not move another member's marker.
            expectError(try client.markRead("mia", in: "c", upTo: id, token: olga), 403, "forbidden")
            expectError(try client.markRead("olga", in: "c", upTo: id, token: mia), 403, "forbidden")
            // A stranger learns nothing: the answer of a missing conversation.
            let stranger = minter.user("nick")
            let hidden = try client.markRead("me", in: "c", upTo: id, token: stranger)
            let missing = try client.markRead("me", in: "nope", upTo: id, token: stranger)
            expectError(hidden, 404, "conversation_not_found")
            #expect(hidden.bodyText == missing.bodyText.replacingOccurrences(of: "nope", with: "c"))
            // An admin moves anyone's, and is told when the user is no member.
            #expect(try client.markRead("olga", in: "c", upTo: id, token: minter.admin()).status == 200)
            expectError(try client.markRead("nick", in: "c", upTo: id, token: minter.admin()), 404, "member_not_found")
        }
    }
}
