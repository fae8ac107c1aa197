import Foundation
import HTTPCore
import HistoryAPI
import HistoryTestSupport
import HistoryWiring
import Testing

/// Every kind of answer leaves through the gates' one exit: the router's
/// own refusals on the event loop, a page answered now from the read pool,
/// an append answered later by its promise after the group commit, a
/// long-poll answered later after its wait. Each carries the decorations
/// of the gates it passed: CORS for the listed origin and the rate-limit
/// headers of the bucket it was charged to, exactly once.
@Suite("The answer's one exit")
struct AnswerExitTests {
    static let origin = "https://app.example"

    private func expectDecorated(_ response: HTTPClientResponse, _ what: String,
                                 sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(response.headers.values(of: "Access-Control-Allow-Origin") == [Self.origin], "\(what)",
                sourceLocation: sourceLocation)
        #expect(response.headers.values(of: "Vary").contains("Origin"), "\(what)", sourceLocation: sourceLocation)
        #expect(response.headers.values(of: "RateLimit-Limit") == ["1000"], "\(what)", sourceLocation: sourceLocation)
        #expect(response.headers.values(of: "RateLimit-Remaining").count == 1, "\(what)", sourceLocation: sourceLocation)
    }

    @Test func nowAndLaterAnswersCarryTheSameDecorations() throws {
        try withOpenServer({
            $0.corsOrigins = [Self.origin]
            $0.rateLimitReads = 100
            $0.rateLimitWrites = 100
            $0.rateLimitBurst = 1000
        }) { server in
            let client = try server.connect()
            defer { client.close() }
            let headers = [("Origin", Self.origin)]
            let created = try client.call(.post, "/v1/conversations", json: #"{"id":"c"}"#, headers: headers)
            #expect(created.status == 201)
            expectDecorated(created, "create (later, by its promise)")

            let appended = try client.call(.post, "/v1/conversations/c/messages",
                                           json: #"{"sender":"ana","body":"hi"}"#, headers: headers)
            #expect(appended.status == 201)
            expectDecorated(appended, "append (later, by its promise)")

            let page = try client.call(.get, "/v1/conversations/c/messages", headers: headers)
            #expect(page.status == 200)
            expectDecorated(page, "page (now, from the read pool)")

            let feed = try client.call(.get, "/v1/conversations/c/events", headers: headers)
            let object = try JSONSerialization.jsonObject(with: Data(feed.body)) as? [String: Any]
            let version = try #require(object?["version"] as? Int)
            let poll = try client.call(.get, "/v1/conversations/c/events?since=\(version)&wait=0.2", headers: headers)
            #expect(poll.status == 200)
            expectDecorated(poll, "long-poll (later, after its wait)")

            let missing = try client.call(.get, "/v1/conversations/nope", headers: headers)
            expectError(missing, 404, "conversation_not_found")
            expectDecorated(missing, "a store refusal (now, from the read pool)")

            let unrouted = try client.call(.get, "/v1/nothing/here", headers: headers)
            expectError(unrouted, 404, "not_found")
            expectDecorated(unrouted, "the router's 404 (now, on the event loop)")

            let wrongMethod = try client.call(.delete, "/v1/conversations/c/messages", headers: headers)
            expectError(wrongMethod, 405, "method_not_allowed")
            expectDecorated(wrongMethod, "the router's 405 (now, on the event loop)")
        }
    }
}
