import Foundation
import HTTPCore
import HistoryAPI
import HistoryStore
import Testing

@Suite("API over HTTP: framing, limits, connections")
struct HTTPBehaviourTests {
    private func raw(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test func unknownPathIsNotFoundAndWrongMethodIsMethodNotAllowed() throws {
        try withRunningServer { client in
            expectError(try client.get("/nope"), 404, "not_found")
            expectError(try client.get("/v1/conversations/"), 404, "not_found")
            let wrong = try client.request(HTTPRequest(method: .put, target: "/v1/conversations/a/messages"))
            expectError(wrong, 405, "method_not_allowed")
            #expect(wrong.headers["Allow"] == "GET, HEAD, POST")
            let item = try client.request(HTTPRequest(method: .get, target: "/v1/conversations/a/messages/1"))
            #expect(item.status == 405)
            #expect(item.headers["Allow"] == "PATCH, DELETE")
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

    @Test func garbageRequestLineIsBadRequest() throws {
        try withRunningServer { client in
            try client.sendRaw(raw("HELLO THERE\r\n\r\n"))
            expectError(try client.receive(), 400, "bad_request")
        }
    }

    @Test func unsupportedVersionIsRefused() throws {
        try withRunningServer { client in
            try client.sendRaw(raw("GET /healthz HTTP/2.0\r\nHost: localhost\r\n\r\n"))
            expectError(try client.receive(), 505, "http_version_not_supported")
        }
    }

    @Test func oversizedHeadersAre431() throws {
        try withRunningServer { client in
            let filler = String(repeating: "a", count: 17 * 1024)
            try client.sendRaw(raw("GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Filler: \(filler)\r\n\r\n"))
            expectError(try client.receive(), 431, "headers_too_large")
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
            #expect(try other.get("/v1/conversations/big").object()["message_count"] as? Int == 0)
        }
    }

    @Test func aBodyCutShortByTheClientStoresNothing() throws {
        try withRunningServer { server in
            let setup = try server.connect()
            defer { setup.close() }
            try setup.createConversation("cut")
            let client = try server.connect()
            let body = #"{"sender":"a","body":"never complete"}"#
            try client.sendRaw(raw("POST /v1/conversations/cut/messages HTTP/1.1\r\nHost: localhost\r\nContent-Length: \(body.utf8.count)\r\n\r\n")
                               + raw(String(body.prefix(10))))
            client.close()
            // A later request on another connection sees nothing stored, and the server is fine.
            #expect(try setup.get("/v1/conversations/cut").object()["message_count"] as? Int == 0)
            // A body whose JSON is cut short but framed completely is invalid JSON.
            expectError(try setup.post("/v1/conversations/cut/messages", String(body.prefix(10))), 400, "invalid_json")
        }
    }

    /// A coding we cannot undo on a body we can frame is 501; a body we
    /// cannot even frame (chunked not last) is 400, as RFC 9112 §6.3 requires.
    @Test func transferCodingsOtherThanChunkedAreNotImplemented() throws {
        try withRunningServer { client in
            try client.sendRaw(raw("POST /v1/conversations HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"))
            expectError(try client.receive(), 501, "not_implemented")
        }
        try withRunningServer { client in
            try client.sendRaw(raw("POST /v1/conversations HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked, identity\r\n\r\n"))
            expectError(try client.receive(), 400, "bad_request")
        }
    }

    @Test func chunkedBodiesAreParsed() throws {
        try withRunningServer { client in
            let json = #"{"id":"chunky"}"#
            let chunked = "5\r\n\(json.prefix(5))\r\n\(String(json.utf8.count - 5, radix: 16))\r\n\(json.dropFirst(5))\r\n0\r\n\r\n"
            try client.sendRaw(raw("POST /v1/conversations HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n\(chunked)"))
            #expect(try client.receive().status == 201)
            #expect(try client.get("/v1/conversations/chunky").status == 200)
        }
    }

    @Test func expectationsOtherThanContinueFail() throws {
        try withRunningServer { client in
            try client.sendRaw(raw("POST /v1/conversations HTTP/1.1\r\nHost: localhost\r\nExpect: 200-ok\r\nContent-Length: 2\r\n\r\n{}"))
            expectError(try client.receive(), 417, "expectation_failed")
        }
    }

    @Test func expectContinueIsHonoured() throws {
        try withRunningServer { client in
            try client.sendRaw(raw("POST /v1/conversations HTTP/1.1\r\nHost: localhost\r\nExpect: 100-continue\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"))
            var response = try client.receive()
            if response.status == 100 { response = try client.receive() }
            #expect(response.status == 201)
        }
    }

    @Test func malformedContentLengthIsBadRequest() throws {
        try withRunningServer { client in
            try client.sendRaw(raw("POST /v1/conversations HTTP/1.1\r\nHost: localhost\r\nContent-Length: abc\r\n\r\n"))
            expectError(try client.receive(), 400, "bad_request")
        }
    }

    @Test func connectionsPastTheLimitAreRefused() throws {
        try withRunningServer(maximumConnections: 1) { server in
            let first = try server.connect()
            defer { first.close() }
            #expect(try first.get("/healthz").status == 200)
            let second = try server.connect()
            defer { second.close() }
            try? second.sendRaw(raw("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"))
            expectError(try second.receive(), 503, "too_many_connections")
            #expect(try first.get("/healthz").status == 200)
        }
    }

    @Test func pipelinedRequestsAreAnsweredInOrder() throws {
        try withRunningServer { client in
            try client.createConversation("p")
            let body = raw(#"{"sender":"a","body":"x"}"#)
            try client.send(HTTPRequest(method: .post, target: "/v1/conversations/p/messages",
                                        headers: ["Content-Length": "\(body.count)", "Content-Type": "application/json"], body: body))
            try client.send(HTTPRequest(method: .get, target: "/nope"))
            try client.send(HTTPRequest(method: .get, target: "/v1/conversations/p"))
            try client.sendRaw(raw("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\nGET /v1/conversations/p/messages HTTP/1.1\r\nHost: localhost\r\n\r\n"))
            #expect(try client.receive().status == 201)
            #expect(try client.receive().status == 404)
            #expect(try client.receive().object()["message_count"] as? Int == 1)
            #expect(try client.receive().status == 200)
            #expect(try client.receive().messageIDs().count == 1)
        }
    }

    @Test func keepAliveServesManyRequestsOnOneConnection() throws {
        try withRunningServer { client in
            try client.createConversation("k")
            for index in 0..<50 {
                #expect(try client.appendMessage("k", body: "n\(index)") > 0)
            }
            #expect(try client.get("/v1/conversations/k").object()["message_count"] as? Int == 50)
            #expect(!client.receiveIsClosed(within: .milliseconds(100)))
        }
    }

    @Test func http10AndConnectionCloseCloseAfterTheAnswer() throws {
        try withRunningServer { server in
            let old = try server.connect()
            defer { old.close() }
            try old.sendRaw(raw("GET /healthz HTTP/1.0\r\n\r\n"))
            let answer = try old.receive()
            #expect(answer.status == 200)
            #expect(old.receiveIsClosed(within: .seconds(5)))

            let closing = try server.connect()
            defer { closing.close() }
            let response = try closing.request(HTTPRequest(method: .get, target: "/healthz", headers: ["Connection": "close"]))
            #expect(response.status == 200)
            #expect(response.headers["Connection"]?.lowercased() == "close")
            #expect(closing.receiveIsClosed(within: .seconds(5)))
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
            let text = response.text
            for family in ["# TYPE history_http_requests_total counter",
                           "# TYPE history_http_request_duration_seconds histogram",
                           "# TYPE history_open_connections gauge",
                           "# TYPE history_parked_long_polls gauge",
                           "# TYPE history_append_batch_size histogram"] {
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
