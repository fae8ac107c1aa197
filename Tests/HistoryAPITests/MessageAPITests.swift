import Foundation
import HTTPCore
import HistoryAPI
import HistoryClient
import HistoryStore
import HistoryTestSupport
import Testing

@Suite("API: append, edit, delete")
struct MessageAPITests {
    private static let messageKeys: Set<String> = [
        "id", "conversation_id", "sender", "body", "created_at", "edited_at", "deleted", "reply_to", "client_id", "version",
    ]

    @Test func appendAnswersTheNewMessage() throws {
        try withRunningServer { client in
            try client.createConversation("c")
            let response = try client.post("/v1/conversations/c/messages", #"{"sender":"ana","body":"hi \"there\"\n😀","extra":{"x":1}}"#)
            #expect(response.status == 201)
            let members = try response.decode(JSONTree.self)
            #expect(members.keys == Self.messageKeys)
            #expect(members["edited_at"] == .null && members["reply_to"] == .null && members["client_id"] == .null)
            let createdAt = try #require(members["created_at"]?.string)
            #expect(createdAt.count == 24 && createdAt.hasSuffix("Z"))
            let message = try response.decode(HistoryMessage.self)
            #expect(message.conversationID == "c")
            #expect(message.sender == "ana")
            #expect(message.body == "hi \"there\"\n😀")
            #expect(message.deleted == false)
            #expect(message.version == 1)
        }
    }

    @Test func aRepeatedClientIDAnswersTheOriginal() throws {
        try withRunningServer { client in
            try client.createConversation("c")
            let body = #"{"sender":"ana","body":"once","client_id":"k-1"}"#
            let first = try client.post("/v1/conversations/c/messages", body)
            #expect(first.status == 201)
            let again = try client.post("/v1/conversations/c/messages", body)
            #expect(again.status == 200)
            let original = try first.decode(HistoryMessage.self)
            let answered = try again.decode(HistoryMessage.self)
            #expect(answered.id == original.id)
            #expect(answered.clientID == "k-1")
            #expect(try client.get("/v1/conversations/c").decode(HistoryConversation.self).messageCount == 1)
            expectError(try client.post("/v1/conversations/c/messages", #"{"sender":"ana","body":"other","client_id":"k-1"}"#),
                        409, "client_id_conflict")
        }
    }

    @Test func replyToMustNameAMessageOfTheConversation() throws {
        try withRunningServer { client in
            try client.createConversation("c")
            try client.createConversation("d")
            let target = try client.appendMessage("c")
            let elsewhere = try client.appendMessage("d")
            let reply = try client.post("/v1/conversations/c/messages", #"{"sender":"bo","body":"re","reply_to":\#(target)}"#)
            #expect(reply.status == 201)
            #expect(try reply.decode(HistoryMessage.self).replyTo == target)
            expectError(try client.post("/v1/conversations/c/messages", #"{"sender":"bo","body":"re","reply_to":\#(elsewhere)}"#),
                        422, "reply_to_not_found")
            expectError(try client.post("/v1/conversations/c/messages", #"{"sender":"bo","body":"re","reply_to":999999}"#),
                        422, "reply_to_not_found")
            #expect(try client.post("/v1/conversations/c/messages", #"{"sender":"bo","body":"re","reply_to":null}"#).status == 201)
        }
    }

    @Test(arguments: [
        (#"{"body":"x"}"#, "invalid_sender"),
        (#"{"sender":null,"body":"x"}"#, "invalid_sender"),
        (#"{"sender":"","body":"x"}"#, "invalid_sender"),
        (#"{"sender":7,"body":"x"}"#, "invalid_sender"),
        ("{\"sender\":\"\(String(repeating: "s", count: 65))\",\"body\":\"x\"}", "invalid_sender"),
        ("{\"sender\":\"e\(String(repeating: "\\u0301", count: 3_000))\",\"body\":\"x\"}", "invalid_sender"),
        (#"{"sender":"a"}"#, "invalid_body"),
        (#"{"sender":"a","body":""}"#, "invalid_body"),
        (#"{"sender":"a","body":true}"#, "invalid_body"),
        ("{\"sender\":\"a\",\"body\":\"\(String(repeating: "b", count: 16 * 1024 + 1))\"}", "invalid_body"),
        (#"{"sender":"a","body":"x","client_id":""}"#, "invalid_client_id"),
        (#"{"sender":"a","body":"x","client_id":5}"#, "invalid_client_id"),
        ("{\"sender\":\"a\",\"body\":\"x\",\"client_id\":\"\(String(repeating: "k", count: 129))\"}", "invalid_client_id"),
        (#"{"sender":"a","body":"x","reply_to":0}"#, "invalid_reply_to"),
        (#"{"sender":"a","body":"x","reply_to":-3}"#, "invalid_reply_to"),
        (#"{"sender":"a","body":"x","reply_to":1.0}"#, "invalid_reply_to"),
        (#"{"sender":"a","body":"x","reply_to":1e2}"#, "invalid_reply_to"),
        (#"{"sender":"a","body":"x","reply_to":"1"}"#, "invalid_reply_to"),
        (#"{"sender":"a","body":"x","reply_to":9223372036854775808}"#, "invalid_reply_to"),
        (#"{"sender":"a","body":"x","reply_to":99999999999999999999999999999999999999}"#, "invalid_reply_to"),
        (#"{"sender":"a","body":"x""#, "invalid_json"),
        (#"["sender"]"#, "invalid_json"),
    ])
    func invalidMessagesStoreNothing(_ body: String, _ code: String) throws {
        try withRunningServer { client in
            try client.createConversation("c")
            expectError(try client.post("/v1/conversations/c/messages", body), 400, code)
            #expect(try client.get("/v1/conversations/c").decode(HistoryConversation.self).messageCount == 0)
        }
    }

    @Test func limitsAreInclusive() throws {
        try withRunningServer { client in
            try client.createConversation("c")
            let sender = String(repeating: "é", count: 64)
            let body = String(repeating: "b", count: 16 * 1024)
            let clientID = String(repeating: "k", count: 128)
            let response = try client.post("/v1/conversations/c/messages",
                                            "{\"sender\":\"\(sender)\",\"body\":\"\(body)\",\"client_id\":\"\(clientID)\"}")
            #expect(response.status == 201)
            #expect(try response.decode(HistoryMessage.self).body == body)
        }
    }

    @Test func appendingToAnUnknownConversationIsNotFound() throws {
        try withRunningServer { client in
            expectError(try client.post("/v1/conversations/nobody/messages", #"{"sender":"a","body":"x"}"#), 404, "conversation_not_found")
        }
    }

    @Test func editSetsEditedAtAndBumpsTheVersion() throws {
        try withRunningServer { client in
            try client.createConversation("c")
            let id = try client.appendMessage("c")
            let edited = try client.patch("/v1/conversations/c/messages/\(id)", #"{"body":"changed"}"#)
            #expect(edited.status == 200)
            let message = try edited.decode(HistoryMessage.self)
            #expect(message.body == "changed")
            #expect(message.editedAt != nil)
            #expect(message.version == 2)
            expectError(try client.patch("/v1/conversations/c/messages/\(id)", #"{"body":""}"#), 400, "invalid_body")
            expectError(try client.patch("/v1/conversations/c/messages/\(id)", #"{}"#), 400, "invalid_body")
            expectError(try client.patch("/v1/conversations/c/messages/\(id)", "nope"), 400, "invalid_json")
            expectError(try client.patch("/v1/conversations/c/messages/999999", #"{"body":"x"}"#), 404, "message_not_found")
            expectError(try client.patch("/v1/conversations/zz/messages/\(id)", #"{"body":"x"}"#), 404, "conversation_not_found")
        }
    }

    @Test func deleteTombstonesOnceAndRefusesLaterEdits() throws {
        try withRunningServer { client in
            try client.createConversation("c")
            let id = try client.appendMessage("c", body: "secret")
            let deleted = try client.delete("/v1/conversations/c/messages/\(id)")
            #expect(deleted.status == 200)
            let tombstone = try deleted.decode(HistoryMessage.self)
            #expect(tombstone.deleted == true)
            #expect(tombstone.body == "")
            let again = try client.delete("/v1/conversations/c/messages/\(id)")
            #expect(again.status == 200)
            #expect(try again.decode(HistoryMessage.self).version == tombstone.version)
            expectError(try client.patch("/v1/conversations/c/messages/\(id)", #"{"body":"x"}"#), 409, "message_deleted")
            expectError(try client.delete("/v1/conversations/c/messages/424242"), 404, "message_not_found")
            // The tombstone keeps its place and its count.
            #expect(try client.get("/v1/conversations/c/messages").messageIDs() == [id])
            #expect(try client.get("/v1/conversations/c").decode(HistoryConversation.self).messageCount == 1)
        }
    }

    @Test(arguments: ["0", "-1", "abc", "1.5", "9223372036854775808", "%zz", "1%20"])
    func invalidMessageIDsInThePath(_ segment: String) throws {
        try withRunningServer { client in
            try client.createConversation("c")
            expectError(try client.delete("/v1/conversations/c/messages/\(segment)"), 400, "invalid_message_id")
            expectError(try client.patch("/v1/conversations/c/messages/\(segment)", #"{"body":"x"}"#), 400, "invalid_message_id")
        }
    }
}
