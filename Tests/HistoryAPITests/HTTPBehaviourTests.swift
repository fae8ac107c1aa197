import Foundation
import HTTPCore
import HistoryAPI
import HistoryClient
import HistoryStore
import HistoryTestSupport
import HistoryWiring
import Testing

/// What the contract adds on top of HTTP: routing answers, the body limit
/// and the connection limit as the server is configured, and metrics.
/// HTTP itself (framing, versions, keep-alive, pipelining, `Expect`) is
/// tested once, on the bare HTTP layer, in HTTPCoreTests.
@Suite("API over HTTP: routes, limits, metrics")
struct HTTPBehaviourTests {
    @Test func unknownPathIsNotFoundAndWrongMethodIsMethodNotAllowed() throws {
        try withRunningServer { client in
            expectError(try client.get("/nope"), 404, "not_found")
            expectError(try client.get("/v1/conversations/"), 404, "not_found")
            let wrong = try client.request(HTTPRequest(method: .put, target: "/v1/conversations/a/messages"))
            expectError(wrong, 405, "method_not_allowed")
            #expect(wrong.headers["Allow"] == "GET, HEAD, POST")
            let item = try client.request(HTTPRequest(method: .post, target: "/v1/conversations/a/messages/1"))
            #expect(item.status == 405)
            #expect(item.headers["Allow"] == "GET, HEAD, PATCH, DELETE")
            // The connection survives every one of them.
            #expect(try client.get("/healthz").status == 200)
        }
    }

    @Test func headAnswersTheGetHeadWithoutABody() throws {
        try withRunningServer { client in
            try client.createConversation("h")
            let get = try client.get("/v1/conversations/h")
            let head = try client.request(HTTPRequest(method: .head, target: "/v1/conversations/h"))
            #expect(head.status == 200)
            #expect(head.body.isEmpty)
            #expect(head.headers["Content-Length"] == "\(get.body.count)")
            #expect(try client.get("/healthz").status == 200)
        }
    }

    @Test func oversizedBodyIs413AndStoresNothing() throws {
        try withRunningServer { server in
            let client = try server.connect()
            defer { client.close() }
            try client.createConversation("big")
            let body = "{\"sender\":\"a\",\"body\":\"\(String(repeating: "b", count: 70 * 1024))\"}"
            expectError(try client.post("/v1/conversations/big/messages", body), 413, "payload_too_large")
            let other = try server.connect()
            defer { other.close() }
            #expect(try other.get("/v1/conversations/big").decode(HistoryConversation.self).messageCount == 0)
        }
    }

    @Test func aBodyCutShortByTheClientStoresNothing() throws {
        try withRunningServer { server in
            let setup = try server.connect()
            defer { setup.close() }
            try setup.createConversation("cut")
            let client = try server.connect()
            let body = #"{"sender":"a","body":"never complete"}"#
            try client.sendRaw("POST /v1/conversations/cut/messages HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n"
                               + body.prefix(10))
            client.close()
            // A later request on another connection sees nothing stored, and the server is fine.
            #expect(try setup.get("/v1/conversations/cut").decode(HistoryConversation.self).messageCount == 0)
            // A body whose JSON is cut short but framed completely is invalid JSON.
            expectError(try setup.post("/v1/conversations/cut/messages", String(body.prefix(10))), 400, "invalid_json")
        }
    }

    @Test func connectionsPastTheLimitAreRefused() throws {
        var configuration = RunningServer.defaultConfiguration
        configuration.maximumConnections = 1
        try withRunningServer(configuration: configuration) { server in
            let first = try server.connect()
            defer { first.close() }
            #expect(try first.get("/healthz").status == 200)
            let second = try server.connect()
            defer { second.close() }
            try? second.sendRaw("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
            expectError(try second.receive(), 503, "too_many_connections")
            #expect(try first.get("/healthz").status == 200)
        }
    }

    /// One peer address cannot take every slot: past its share a new
    /// connection from it is refused, while the server has room, and a slot
    /// it gives back is its own again.
    @Test func connectionsPastThePeersShareAreRefused() throws {
        var configuration = RunningServer.defaultConfiguration
        configuration.maximumConnectionsPerClient = 2
        try withRunningServer(configuration: configuration) { server in
            let first = try server.connect()
            defer { first.close() }
            let second = try server.connect()
            #expect(try first.get("/healthz").status == 200)
            #expect(try second.get("/healthz").status == 200)
            let third = try server.connect()
            defer { third.close() }
            try? third.sendRaw("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
            expectError(try third.receive(), 503, "too_many_connections")
            #expect(try first.get("/healthz").status == 200)

            second.close()
            #expect(eventually { server.application.openConnectionCount == 1 })
            let again = try server.connect()
            defer { again.close() }
            #expect(try again.get("/healthz").status == 200)
        }
    }

    @Test func zeroConnectionsPerClientMeansNoShare() throws {
        var configuration = RunningServer.defaultConfiguration
        configuration.maximumConnectionsPerClient = 0
        try withRunningServer(configuration: configuration) { server in
            let clients = try (0..<300).map { _ in try server.connect() }
            defer { for client in clients { client.close() } }
            #expect(try clients.last!.get("/healthz").status == 200)
            #expect(try clients.first!.get("/healthz").status == 200)
        }
    }

    @Test func metricsShowTheTraffic() throws {
        try withRunningServer { client in
            try client.createConversation("m")
            try client.appendMessage("m")
            _ = try client.get("/v1/conversations/m/messages?limit=5")
            _ = try client.get("/nope")
            let response = try client.get("/metrics")
            #expect(response.status == 200)
            #expect(response.headers["Content-Type"]?.hasPrefix("text/plain; version=0.0.4") == true)
            let text = response.bodyText
            for family in ["# TYPE history_http_requests_total counter",
                           "# TYPE history_http_request_duration_seconds histogram",
                           "# TYPE history_open_connections gauge",
                           "# TYPE history_parked_long_polls gauge",
                           "# TYPE history_read_pool_queued gauge",
                           "# TYPE history_append_batch_size histogram",
                           "# TYPE history_page_statement_size histogram"] {
                #expect(text.contains(family), "\(family)")
            }
            #expect(text.contains(#"history_http_requests_total{route="GET /v1/conversations/{cid}/messages",method="GET",status="200"} 1"#))
            #expect(text.contains(#"history_http_requests_total{route="unmatched",method="GET",status="404"} 1"#))
            #expect(text.contains(#"history_http_request_duration_seconds_count{route="POST /v1/conversations/{cid}/messages"} 1"#))
            // Every write goes through the group commit (the conversation's creation too).
            let batches = text.split(separator: "\n").first { $0.hasPrefix("history_append_batch_size_count ") }
            #expect((batches?.split(separator: " ").last).flatMap { Int($0) } ?? 0 >= 1)
            #expect(text.contains("history_open_connections 1"))
        }
    }
}
