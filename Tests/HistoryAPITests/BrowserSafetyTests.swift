import HistoryTestSupport
import Foundation
import HTTPCore
import HistoryAPI
import HistoryWiring
import Testing

@Suite struct BrowserSafetyTests {
    // MARK: - Host

    @Test(arguments: [
        ("127.0.0.1", 200), ("localhost:8080", 200), ("LOCALHOST", 200), ("[::1]:9", 200), ("[::1]", 200),
        ("chat.internal", 200), ("chat.internal:443", 200),
        ("evil.example", 421), ("evil.example:80", 421), ("127.0.0.1.evil.example", 421), ("::1", 421),
        ("localhost:http", 421), ("", 421),
    ])
    func aLoopbackBindAnswersOnlyItsOwnNames(_ host: String, _ status: Int) throws {
        try withOpenServer({ $0.allowedHosts = ["chat.internal"] }) { server in
            let client = try server.connect()
            defer { client.close() }
            let response = try client.call(.get, "/v1/conversations/none", headers: [("Host", host)])
            if status == 421 {
                expectError(response, 421, "misdirected_request")
            } else {
                expectError(response, 404, "conversation_not_found")
            }
        }
    }

    @Test func aNonLoopbackBindTakesAnyHost() throws {
        try withOpenServer({ $0.host = "0.0.0.0"; $0.insecureNoAuth = true }) { server in
            let client = try server.connect()
            defer { client.close() }
            #expect(try client.call(.get, "/healthz", headers: [("Host", "evil.example")]).status == 200)
        }
    }

    // MARK: - Content-Type

    @Test(arguments: [
        ("application/json", 201), ("application/json; charset=utf-8", 201), ("Application/JSON;Charset=\"UTF-8\"", 201),
        ("text/plain", 415), ("application/x-www-form-urlencoded", 415), ("multipart/form-data; boundary=x", 415),
        ("application/json; charset=latin1", 415), ("application/jsonp", 415), (nil, 415),
    ] as [(String?, Int)])
    func bodiesMustBeJSON(_ contentType: String?, _ status: Int) throws {
        try withOpenServer({ _ in }) { server in
            let client = try server.connect()
            defer { client.close() }
            try client.createConversation("c")
            let body = Array(#"{"sender":"ana","body":"hi"}"#.utf8)
            var headers: HTTPHeaders = ["Content-Length": "\(body.count)"]
            if let contentType { headers.add(name: "Content-Type", value: contentType) }
            let response = try client.request(HTTPRequest(method: .post, target: "/v1/conversations/c/messages",
                                                          headers: headers, body: body))
            if status == 415 {
                expectError(response, 415, "unsupported_media_type")
            } else {
                #expect(response.status == status, "\(response.bodyText)")
            }
        }
    }

    @Test func aBodylessCreateNeedsNoContentType() throws {
        try withOpenServer({ _ in }) { server in
            let client = try server.connect()
            defer { client.close() }
            let response = try client.request(HTTPRequest(method: .post, target: "/v1/conversations",
                                                          headers: ["Content-Length": "0"]))
            #expect(response.status == 201, "\(response.bodyText)")
        }
    }

    // MARK: - CORS

    static let origin = "https://app.example"

    @Test func aListedOriginGetsCORSHeaders() throws {
        try withOpenServer({ $0.corsOrigins = [Self.origin] }) { server in
            let client = try server.connect()
            defer { client.close() }
            let response = try client.call(.get, "/healthz", headers: [("Origin", Self.origin)])
            #expect(response.status == 200)
            #expect(response.headers["Access-Control-Allow-Origin"] == Self.origin)
            #expect(response.headers.values(of: "Vary").contains("Origin"))

            let preflight = try client.call(.options, "/v1/conversations/c/messages",
                                            headers: [("Origin", Self.origin), ("Access-Control-Request-Method", "POST"),
                                                      ("Access-Control-Request-Headers", "authorization, content-type")])
            #expect(preflight.status == 204)
            #expect(preflight.headers["Access-Control-Allow-Origin"] == Self.origin)
            #expect(preflight.headers["Access-Control-Allow-Methods"] == "GET, HEAD, POST")
            #expect(preflight.headers["Access-Control-Allow-Headers"] == "Authorization, Content-Type")
            #expect(preflight.headers["Access-Control-Max-Age"] != nil)
        }
    }

    @Test func aPreflightNeedsNoTokenButTheRequestDoes() throws {
        try withTokenServer({ $0.corsOrigins = [Self.origin] }) { server, _ in
            let client = try server.connect()
            defer { client.close() }
            let preflight = try client.call(.options, "/v1/conversations",
                                            headers: [("Origin", Self.origin), ("Access-Control-Request-Method", "POST")])
            #expect(preflight.status == 204)
            let request = try client.call(.post, "/v1/conversations", json: "{}", headers: [("Origin", Self.origin)])
            expectError(request, 401, "missing_token")
            // The browser may show the 401 to the page: it carries the CORS headers too.
            #expect(request.headers["Access-Control-Allow-Origin"] == Self.origin)
        }
    }

    @Test func anotherOriginGetsNoCORSHeaderAtAll() throws {
        try withOpenServer({ $0.corsOrigins = [Self.origin] }) { server in
            let client = try server.connect()
            defer { client.close() }
            for origin in ["https://evil.example", "https://app.example.evil.example", "null"] {
                let response = try client.call(.get, "/healthz", headers: [("Origin", origin)])
                #expect(response.status == 200)
                #expect(!response.headers.contains { $0.name.lowercased().hasPrefix("access-control-") }, "\(origin)")
                let preflight = try client.call(.options, "/v1/conversations",
                                                headers: [("Origin", origin), ("Access-Control-Request-Method", "POST")])
                expectError(preflight, 405, "method_not_allowed")
                #expect(!preflight.headers.contains { $0.name.lowercased().hasPrefix("access-control-") }, "\(origin)")
            }
        }
    }

    // MARK: - Metrics

    @Test func refusalsAreCountedByCode() throws {
        try withTokenServer { server, minter in
            let client = try server.connect()
            defer { client.close() }
            _ = try client.call(.get, "/v1/conversations/c")
            _ = try client.call(.get, "/v1/conversations/c", token: "not.a.token")
            _ = try client.call(.get, "/metrics", token: minter.user("mia"))
            let metrics = try client.call(.get, "/metrics", token: minter.admin())
            #expect(metrics.status == 200)
            #expect(metrics.bodyText.contains(#"history_access_denied_total{status="401",code="missing_token"} 1"#), "\(metrics.bodyText)")
            #expect(metrics.bodyText.contains(#"history_access_denied_total{status="401",code="invalid_token"} 1"#))
            #expect(metrics.bodyText.contains(#"history_access_denied_total{status="403",code="forbidden"} 1"#))
            #expect(!metrics.bodyText.contains("mia"))
        }
    }
}
