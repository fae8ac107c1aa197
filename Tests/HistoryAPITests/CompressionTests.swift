import HTTPCore
@testable import HistoryAPI
import HistoryTestSupport
import HistoryWiring
import Testing

/// docs/API.md, "Conditional requests and compression": gzip answers over
/// real sockets (on PostgreSQL too with `HISTORY_TEST_STORE=postgres`),
/// inflated here with zlib and compared with the identity answer.
@Suite("API: gzip")
struct CompressionTests {
    /// A conversation "c" of 50 messages: a page of ~6 KiB of JSON.
    private func seed(_ client: HTTPClientConnection) throws {
        try client.createConversation("c")
        for index in 0..<50 { try client.appendMessage("c", body: "message \(index), repeated words repeated words") }
    }

    private func get(_ client: HTTPClientConnection, _ target: String, acceptEncoding: String?,
                     method: HTTPMethod = .get) throws -> HTTPClientResponse {
        try client.call(method, target, headers: acceptEncoding.map { [("Accept-Encoding", $0)] } ?? [])
    }

    @Test func aGzipPageInflatesToTheIdentityPage() throws {
        try withRunningServer(client: { client in
            try seed(client)
            let identity = try get(client, "/v1/conversations/c/messages", acceptEncoding: nil)
            #expect(identity.headers["Content-Encoding"] == nil)
            #expect(identity.body.count >= ContentCoding.minimumCompressedBytes)
            #expect(identity.headers.values(of: "Vary").contains("Accept-Encoding"))

            let gzip = try get(client, "/v1/conversations/c/messages", acceptEncoding: "gzip")
            #expect(gzip.status == 200)
            #expect(gzip.headers["Content-Encoding"] == "gzip")
            #expect(gzip.headers.values(of: "Vary").contains("Accept-Encoding"))
            #expect(gzip.headers["Content-Length"] == "\(gzip.body.count)")
            #expect(gzip.body.count < identity.body.count / 2)
            #expect(Array(gzip.body.prefix(2)) == [0x1f, 0x8b])
            #expect(Gzip.decompress(gzip.body) == identity.body)

            // gzip and identity are two representations: two strong tags.
            let identityTag = try #require(identity.headers["ETag"])
            let gzipTag = try #require(gzip.headers["ETag"])
            #expect(gzipTag != identityTag)
            let revalidated = try client.call(.get, "/v1/conversations/c/messages",
                                              headers: [("Accept-Encoding", "gzip"), ("If-None-Match", gzipTag)])
            #expect(revalidated.status == 304 && revalidated.body.isEmpty)
            #expect(revalidated.headers["Content-Encoding"] == nil)
            #expect(revalidated.headers["ETag"] == gzipTag)
            let otherCoding = try client.call(.get, "/v1/conversations/c/messages", headers: [("If-None-Match", gzipTag)])
            #expect(otherCoding.status == 200 && otherCoding.body == identity.body)
        })
    }

    @Test(arguments: [
        ("gzip", true), ("GZIP", true), ("x-gzip", true), ("deflate, gzip;q=0.5", true), ("*", true),
        ("br;q=1.0, gzip;q=0.001", true), ("gzip;q=0", false), ("gzip;q=0.000", false), ("gzip; q=0", false),
        ("*;q=0", false), ("identity", false), ("deflate, br", false), ("gzip;q=0, *", false), ("", false),
        ("gzip;q=garbage", false),
    ])
    func qValuesDecide(acceptEncoding: String, compressed: Bool) throws {
        try withRunningServer(client: { client in
            try seed(client)
            let answer = try get(client, "/v1/conversations/c/messages", acceptEncoding: acceptEncoding)
            #expect(answer.status == 200)
            #expect((answer.headers["Content-Encoding"] == "gzip") == compressed, "\(acceptEncoding)")
            #expect(answer.headers.values(of: "Vary").contains("Accept-Encoding"))
        })
    }

    @Test func aBodyUnder1KiBIsNotCompressed() throws {
        try withRunningServer(client: { client in
            try client.createConversation("small")
            let answer = try get(client, "/v1/conversations/small", acceptEncoding: "gzip")
            #expect(answer.status == 200)
            #expect(answer.body.count < ContentCoding.minimumCompressedBytes)
            #expect(answer.headers["Content-Encoding"] == nil)
            #expect(answer.headers.values(of: "Vary").contains("Accept-Encoding"))
            #expect(try answer.decode(ConversationCount.self).message_count == 0)
            // An error is never compressed either.
            let missing = try get(client, "/v1/conversations/nowhere/messages", acceptEncoding: "gzip")
            #expect(missing.status == 404 && missing.headers["Content-Encoding"] == nil)
        })
    }

    /// HEAD answers the GET's headers: the gzip body's `Content-Length`.
    @Test func headAnswersTheGzipHeaders() throws {
        try withRunningServer(client: { client in
            try seed(client)
            let full = try get(client, "/v1/conversations/c/messages", acceptEncoding: "gzip")
            let head = try get(client, "/v1/conversations/c/messages", acceptEncoding: "gzip", method: .head)
            #expect(head.status == 200 && head.body.isEmpty)
            #expect(head.headers["Content-Encoding"] == "gzip")
            #expect(head.headers["Content-Length"] == "\(full.body.count)")
            #expect(head.headers["ETag"] == full.headers["ETag"])
            #expect(try client.get("/healthz").status == 200)
        })
    }

    /// The budget bounds the JSON, not the gzip: a page cut by
    /// `--max-response-bytes` is the same page, compressed or not.
    @Test func theBudgetAppliesBeforeCompression() throws {
        var configuration = RunningServer.defaultConfiguration
        configuration.maximumResponseBytes = 2048
        try withRunningServer(configuration: configuration) { server in
            let client = try server.connect()
            defer { client.close() }
            try seed(client)
            let identity = try get(client, "/v1/conversations/c/messages", acceptEncoding: nil)
            let gzip = try get(client, "/v1/conversations/c/messages", acceptEncoding: "gzip")
            #expect(identity.body.count <= 2048)
            #expect(gzip.headers["Content-Encoding"] == "gzip")
            #expect(Gzip.decompress(gzip.body) == identity.body)
            #expect(try identity.messageIDs().count < 50)
        }
    }
}

private struct ConversationCount: Decodable {
    let message_count: Int64
}
