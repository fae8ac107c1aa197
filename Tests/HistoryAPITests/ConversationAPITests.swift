import Foundation
import HTTPCore
import HistoryAPI
import HistoryClient
import HistoryStore
import HistoryTestSupport
import HistoryWiring
import Testing

@Suite("API: conversations and health")
struct ConversationAPITests {
    @Test func createsAndReadsAConversation() throws {
        try withRunningServer { client in
            let created = try client.post("/v1/conversations", #"{"id":"general","title":"General chat"}"#)
            #expect(created.status == 201)
            #expect(created.headers["Location"] == "/v1/conversations/general")
            #expect(created.headers["Content-Type"]?.hasPrefix("application/json") == true)
            let members = try created.decode(JSONTree.self)
            #expect(members.keys == ["id", "title", "created_at", "message_count", "oldest_id", "newest_id", "version"])
            #expect(members["oldest_id"] == .null)
            let conversation = try created.decode(HistoryConversation.self)
            #expect(conversation.id == "general")
            #expect(conversation.title == "General chat")
            #expect(conversation.messageCount == 0)
            #expect(conversation.version == 0)

            let first = try client.appendMessage("general")
            let second = try client.appendMessage("general")
            let read = try client.get("/v1/conversations/general")
            #expect(read.status == 200)
            let counters = try read.decode(HistoryConversation.self)
            #expect(counters.messageCount == 2)
            #expect(counters.oldestID == first)
            #expect(counters.newestID == second)
            #expect(counters.version == 2)
        }
    }

    @Test func anEmptyBodyCreatesAConversationWithAGeneratedID() throws {
        try withRunningServer { client in
            let created = try client.request(.post, "/v1/conversations", body: [])
            #expect(created.status == 201)
            let id = try created.decode(HistoryConversation.self).id
            #expect(!id.isEmpty && id.count <= 64)
            #expect(try client.get("/v1/conversations/\(id)").status == 200)
            #expect(try client.post("/v1/conversations", "{}").status == 201)
            #expect(try client.post("/v1/conversations", #"{"id":null,"title":null,"unknown":[1]}"#).status == 201)
        }
    }

    @Test func aTakenIDIsAConflict() throws {
        try withRunningServer { client in
            try client.createConversation("dup")
            expectError(try client.post("/v1/conversations", #"{"id":"dup"}"#), 409, "conversation_exists")
        }
    }

    @Test(arguments: [#"{"id":"bad id"}"#, #"{"id":""}"#, #"{"id":"é"}"#, #"{"id":42}"#, #"{"id":["a"]}"#,
                      "{\"id\":\"\(String(repeating: "a", count: 65))\"}"])
    func invalidConversationIDs(_ body: String) throws {
        try withRunningServer { client in
            expectError(try client.post("/v1/conversations", body), 400, "invalid_conversation_id")
        }
    }

    @Test func invalidTitles() throws {
        try withRunningServer { client in
            let long = String(repeating: "t", count: 257)
            expectError(try client.post("/v1/conversations", "{\"title\":\"\(long)\"}"), 400, "invalid_title")
            expectError(try client.post("/v1/conversations", #"{"title":7}"#), 400, "invalid_title")
            let longest = String(repeating: "é", count: 256)
            #expect(try client.post("/v1/conversations", "{\"title\":\"\(longest)\"}").status == 201)
        }
    }

    @Test(arguments: ["[]", "\"text\"", "1", "null", "{", #"{"id":"a",}"#, #"{"id":"a","id":"b"}"#, "{} x"])
    func bodiesThatAreNotAJSONObject(_ body: String) throws {
        try withRunningServer { client in
            expectError(try client.post("/v1/conversations", body), 400, "invalid_json")
        }
    }

    @Test func invalidUTF8IsInvalidJSON() throws {
        try withRunningServer { client in
            let bytes: [UInt8] = Array(#"{"title":""#.utf8) + [0xC0, 0xAF] + Array(#""}"#.utf8)
            expectError(try client.request(.post, "/v1/conversations", body: bytes), 400, "invalid_json")
        }
    }

    @Test(arguments: ["/v1/conversations/missing", "/v1/conversations/not%20valid", "/v1/conversations/%zz",
                      "/v1/conversations/\(String(repeating: "x", count: 65))"])
    func unknownOrInvalidConversationIsNotFound(_ target: String) throws {
        try withRunningServer { client in
            expectError(try client.get(target), 404, "conversation_not_found")
            expectError(try client.get(target + "/messages"), 404, "conversation_not_found")
        }
    }

    @Test func healthzAnswersOK() throws {
        try withRunningServer { client in
            let response = try client.get("/healthz")
            #expect(response.status == 200)
            #expect(try response.decode(HealthStatus.self).isOK)
        }
    }

    @Test func healthzIsUnavailableWhenTheStoreIsClosed() throws {
        try withRunningServer { server in
            let client = try server.connect()
            defer { client.close() }
            server.application.store.close()
            expectError(try client.get("/healthz"), 503, "store_unavailable")
            expectError(try client.get("/v1/conversations/a"), 503, "shutting_down")
        }
    }
}
