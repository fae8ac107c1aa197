import Foundation
import HTTPCore
import HistoryAPI
import HistoryTestSupport
import HistoryWiring
import Testing

/// The web viewer's files at `/`, over real sockets: exact bytes, headers,
/// revalidation, and nothing at all when it is off.
@Suite struct WebViewerTests {
    /// The repository's `web/` folder, which the binary must serve byte for byte.
    static let webFolder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appending(path: "web")

    static func sourceFiles() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: webFolder.path)
            .filter { ["html", "css", "js", "svg"].contains(URL(fileURLWithPath: $0).pathExtension) }
            .sorted()
    }

    @Test func slashIsTheAppWithAStrictPolicy() throws {
        try withOpenServer({ _ in }) { server in
            let client = try server.connect()
            defer { client.close() }
            let response = try client.call(.get, "/")
            #expect(response.status == 200)
            #expect(response.headers["Content-Type"] == "text/html; charset=utf-8")
            #expect(response.headers["X-Content-Type-Options"] == "nosniff")
            let policy = try #require(response.headers["Content-Security-Policy"])
            for directive in ["default-src 'self'", "script-src 'self'", "connect-src 'self'", "frame-ancestors 'none'",
                              "object-src 'none'"] {
                #expect(policy.contains(directive), "\(directive) missing from \(policy)")
            }
            #expect(!policy.contains("unsafe-inline") && !policy.contains("unsafe-eval"))
            let etag = try #require(response.headers["ETag"])
            #expect(etag.hasPrefix("\"") && etag.hasSuffix("\"") && etag.count > 10)
            // No inline script: every <script> names its file.
            let html = response.bodyText
            #expect(html.contains(#"<script type="module" src="/app.js"></script>"#))
            #expect(html.components(separatedBy: "<script").count == html.components(separatedBy: "<script type=\"module\" src=").count)
            #expect(!html.contains(" style=") && !html.contains("<style"))
        }
    }

    @Test func everyFileOfWebIsServedExactlyWithItsType() throws {
        let files = try Self.sourceFiles()
        #expect(files.contains("index.html") && files.contains("app.js") && files.contains("style.css"))
        try withOpenServer({ _ in }) { server in
            let client = try server.connect()
            defer { client.close() }
            var etags: Set<String> = []
            for name in files {
                let response = try client.call(.get, "/\(name)")
                #expect(response.status == 200, "\(name)")
                #expect(response.body == Array(try Data(contentsOf: Self.webFolder.appending(path: name))), "\(name) differs from web/")
                let type = response.headers["Content-Type"] ?? ""
                switch URL(fileURLWithPath: name).pathExtension {
                case "html": #expect(type == "text/html; charset=utf-8")
                case "css": #expect(type == "text/css; charset=utf-8")
                case "js": #expect(type == "text/javascript; charset=utf-8")
                default: #expect(type == "image/svg+xml")
                }
                #expect(response.headers["X-Content-Type-Options"] == "nosniff")
                #expect(response.headers["Content-Security-Policy"] != nil)
                etags.insert(try #require(response.headers["ETag"]))
            }
            #expect(etags.count == files.count, "two files share an ETag")
        }
    }

    @Test func aKnownETagIsAnsweredNotModified() throws {
        try withOpenServer({ _ in }) { server in
            let client = try server.connect()
            defer { client.close() }
            let first = try client.call(.get, "/app.js")
            let etag = try #require(first.headers["ETag"])
            for match in [etag, "W/\(etag)", "\"other\", \(etag)", "*"] {
                let again = try client.call(.get, "/app.js", headers: [("If-None-Match", match)])
                #expect(again.status == 304, "\(match)")
                #expect(again.body.isEmpty)
                #expect(again.headers["ETag"] == etag)
                #expect(again.headers["Content-Security-Policy"] != nil)
            }
            let stale = try client.call(.get, "/app.js", headers: [("If-None-Match", "\"stale\"")])
            #expect(stale.status == 200 && stale.body == first.body)
            // The connection is still in step after the bodiless answers.
            #expect(try client.call(.get, "/healthz").status == 200)
        }
    }

    @Test func headHasNoBodyAndOtherMethodsAre405() throws {
        try withOpenServer({ _ in }) { server in
            let client = try server.connect()
            defer { client.close() }
            let head = try client.call(.head, "/style.css")
            #expect(head.status == 200 && head.body.isEmpty && head.headers["ETag"] != nil)
            let post = try client.call(.post, "/", json: "{}")
            expectError(post, 405, "method_not_allowed")
            #expect(post.headers["Allow"] == "GET, HEAD")
            expectError(try client.call(.get, "/missing.js"), 404, "not_found")
            expectError(try client.call(.get, "/web/app.js"), 404, "not_found")
        }
    }

    @Test func offRemovesEveryFile() throws {
        try withOpenServer({ $0.webViewer = false }) { server in
            let client = try server.connect()
            defer { client.close() }
            for path in ["/", "/index.html", "/app.js", "/style.css"] {
                expectError(try client.call(.get, path), 404, "not_found")
            }
            #expect(try client.call(.get, "/healthz").status == 200)
        }
    }

    @Test func tokensModeServesTheAppWithoutAToken() throws {
        try withTokenServer { server, _ in
            let client = try server.connect()
            defer { client.close() }
            #expect(try client.call(.get, "/").status == 200)
            #expect(try client.call(.get, "/app.js").status == 200)
            expectError(try client.call(.get, "/v1/users/me/conversations"), 401, "missing_token")
        }
    }

    @Test func aRebindingHostGetsNoApp() throws {
        try withOpenServer({ _ in }) { server in
            let client = try server.connect()
            defer { client.close() }
            expectError(try client.call(.get, "/", headers: [("Host", "evil.example")]), 421, "misdirected_request")
        }
    }
}
