import Dispatch
import Foundation
import HTTPCore
@testable import HistoryAPI
import HistoryTestSupport
import HistoryWiring
import Synchronization
import Testing

/// Newest pages answered from the bytes kept by `NewestPageCache`, over
/// real sockets (on PostgreSQL too with `HISTORY_TEST_STORE=postgres`, where
/// a page is read first and only its encoding is spared): the same bytes
/// as the read that kept them, never a version behind a change already
/// answered, never to a removed member.
@Suite("API: newest pages kept")
struct NewestPageCacheTests {
    private static let newest = "/v1/conversations/c/messages?limit=50"

    /// The `history_newest_page_cache_hits_total` of `/metrics`.
    private func hits(_ client: HTTPClientConnection) throws -> Int {
        let text = try client.get("/metrics").bodyText
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("history_newest_page_cache_hits_total ") })
        return try #require(Int(line.split(separator: " ")[1]))
    }

    /// The top-level `version` of a JSON answer (a page's, a message's).
    private func version(in answer: HTTPClientResponse) -> Int64? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any] else { return nil }
        return (object["version"] as? NSNumber)?.int64Value
    }

    /// The `history_newest_page_cache_stores_total` of `/metrics`.
    private func stores(_ client: HTTPClientConnection) throws -> Int {
        let text = try client.get("/metrics").bodyText
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("history_newest_page_cache_stores_total ") })
        return try #require(Int(line.split(separator: " ")[1]))
    }

    /// `--newest-page-cache-mib 0` keeps nothing, and a cache whose shards
    /// are smaller than a page keeps no such page: every open is read and
    /// encoded, and answers the same bytes.
    @Test(arguments: [0, 16 * 1024])
    func aCacheTooSmallForThePageKeepsNothing(capacity: Int) throws {
        var configuration = RunningServer.defaultConfiguration
        configuration.newestPageCacheBytes = capacity
        try withRunningServer(configuration: configuration) { server in
            let client = try server.connect()
            defer { client.close() }
            try client.createConversation("c")
            // 60 messages: a page of 50 is about 3 KB, over 16 KiB's 1 KiB shards.
            for index in 0..<60 { try client.appendMessage("c", body: "message \(index) with some words") }
            let first = try client.get(Self.newest)
            let second = try client.get(Self.newest)
            #expect(first.status == 200 && second.body == first.body)
            #expect(try stores(client) == 0)
            #expect(try hits(client) == 0)
        }
        // The default keeps it: the same requests, one stored, one hit.
        try withRunningServer(client: { client in
            try client.createConversation("c")
            for index in 0..<60 { try client.appendMessage("c", body: "message \(index) with some words") }
            _ = try client.get(Self.newest)
            _ = try client.get(Self.newest)
            #expect(try stores(client) == 1)
            #expect(try hits(client) == 1)
        })
    }

    @Test func aKeptPageIsTheBytesOfTheReadThatKeptIt() throws {
        try withRunningServer(client: { client in
            try client.createConversation("c")
            for index in 0..<60 { try client.appendMessage("c", body: "message \(index) with some words") }
            for coding in [nil, "gzip"] as [String?] {
                let headers = coding.map { [("Accept-Encoding", $0)] } ?? []
                let first = try client.call(.get, Self.newest, headers: headers)
                let before = try hits(client)
                let second = try client.call(.get, Self.newest, headers: headers)
                #expect(try hits(client) == before + 1, "the second was not answered from the kept bytes")
                #expect(first.status == 200 && second.status == 200)
                #expect(second.body == first.body)
                #expect(second.headers["ETag"] == first.headers["ETag"])
                #expect(second.headers["Content-Encoding"] == coding)
                #expect(second.headers["Content-Type"] == first.headers["Content-Type"])
                #expect(second.headers.values(of: "Vary").contains("Accept-Encoding"))
                #expect(second.headers["Content-Length"] == "\(second.body.count)")
                let head = try client.call(.head, Self.newest, headers: headers)
                #expect(head.status == 200 && head.body.isEmpty && head.headers["ETag"] == first.headers["ETag"])
            }
            // Two codings, two entries: the gzip one inflates to the identity one.
            let identity = try client.get(Self.newest)
            let gzip = try client.call(.get, Self.newest, headers: [("Accept-Encoding", "gzip")])
            #expect(Gzip.decompress(gzip.body) == identity.body)
            // A conditional request whose tag is old gets the kept page too.
            let stale = try client.call(.get, Self.newest, headers: [("If-None-Match", "\"m1-0000000000000000\"")])
            #expect(stale.status == 200 && stale.body == identity.body)
            // A bad query on a kept conversation is its error, never a kept page.
            expectError(try client.get("/v1/conversations/c/messages?limit=0"), 400, "invalid_limit")
            expectError(try client.get("/v1/conversations/c/messages?window=3"), 400, "invalid_window")
            expectError(try client.get("/v1/conversations/c/messages?limit=50&limit=50"), 400, "invalid_limit")
            // Other limits and deeper pages are read as ever, and right.
            let nine = try client.get("/v1/conversations/c/messages?limit=9")
            #expect(nine.status == 200 && nine.bodyText.contains("message 59") && !nine.bodyText.contains("message 50 "))
        })
    }

    /// After each append, edit and delete is answered, the next newest page
    /// shows it, with a newer tag and version.
    @Test func everyAnsweredChangeIsInTheNextPage() throws {
        try withRunningServer(client: { client in
            try client.createConversation("c")
            var lastTag = ""
            for turn in 0..<6 {
                let id = try client.appendMessage("c", body: "posted \(turn)")
                let posted = try client.get(Self.newest)
                #expect(posted.bodyText.contains("posted \(turn)"))
                #expect(try client.get(Self.newest).body == posted.body)
                let edited = try client.call(.patch, "/v1/conversations/c/messages/\(id)", json: #"{"body":"edited \#(turn)"}"#)
                #expect(edited.status == 200)
                let afterEdit = try client.get(Self.newest)
                #expect(afterEdit.bodyText.contains("edited \(turn)") && !afterEdit.bodyText.contains("posted \(turn)"))
                #expect(afterEdit.headers["ETag"] != posted.headers["ETag"])
                #expect(try client.get(Self.newest).body == afterEdit.body)
                #expect(try client.call(.delete, "/v1/conversations/c/messages/\(id)").status == 200)
                let afterDelete = try client.get(Self.newest)
                #expect(!afterDelete.bodyText.contains("edited \(turn)"))
                #expect(afterDelete.headers["ETag"] != afterEdit.headers["ETag"])
                #expect((version(in: afterDelete) ?? 0) > (version(in: afterEdit) ?? .max))
                lastTag = afterDelete.headers["ETag"] ?? ""
            }
            #expect(!lastTag.isEmpty)
        })
    }

    /// A member reads the newest page (kept, and on SQLite its role kept);
    /// once its removal is answered, its next request is 404, conditional
    /// or not, while the owner still gets the kept page.
    @Test func aRemovedMemberIsNotAnsweredFromTheKeptPage() throws {
        try withTokenServer { server, minter in
            let client = try server.connect()
            defer { client.close() }
            let ana = minter.user("ana"), bob = minter.user("bob")
            #expect(try client.createConversation("t", ownedBy: ana) == 201)
            #expect(try client.call(.post, "/v1/conversations/t/messages", token: ana, json: #"{"body":"x"}"#).status == 201)
            for _ in 0..<3 {
                #expect(try client.call(.put, "/v1/conversations/t/members/bob", token: ana, json: "{}").status == 201)
                let first = try client.call(.get, "/v1/conversations/t/messages", token: bob)
                #expect(first.status == 200)
                #expect(try client.call(.get, "/v1/conversations/t/messages", token: bob).body == first.body)
                #expect(try client.call(.delete, "/v1/conversations/t/members/bob", token: ana).status == 200)
                expectError(try client.call(.get, "/v1/conversations/t/messages", token: bob), 404, "conversation_not_found")
                expectError(try client.call(.get, "/v1/conversations/t/messages", token: minter.user("eve")),
                            404, "conversation_not_found")
                #expect(try client.call(.get, "/v1/conversations/t/messages", token: ana).body == first.body)
            }
        }
    }

    /// Two writers post while two readers ask for the newest page without
    /// a tag: every answer is at least the version of every write answered
    /// before it was sent, and its bytes are of the version its tag names.
    @Test func noKeptPageIsBehindAnAnsweredWrite() throws {
        try withRunningServer { server in
            let setup = try server.connect()
            defer { setup.close() }
            try setup.createConversation("c")
            _ = try setup.appendMessage("c")
            let answered = Atomic<Int64>(0)
            let failures = Mutex<[String]>([])
            let kept = Atomic<Int>(0)
            let writing = Atomic<Int>(2)
            let (finished, errors) = runClientThreads(server, count: 4) { index, client in
                if index < 2 {
                    defer { writing.subtract(1, ordering: .sequentiallyConsistent) }
                    for turn in 0..<60 {
                        let posted = try client.post("/v1/conversations/c/messages", #"{"sender":"ana","body":"w\#(index) \#(turn)"}"#)
                        guard posted.status == 201, let version = version(in: posted) else {
                            failures.withLock { $0.append("post: \(posted.status)") }
                            return
                        }
                        answered.raise(to: version)
                    }
                    return
                }
                var previous: [UInt8] = []
                // Bounded: at most 5,000 requests, and only while writers write.
                for _ in 0..<5_000 where writing.load(ordering: .sequentiallyConsistent) > 0 {
                    let floor = answered.load(ordering: .sequentiallyConsistent)
                    let page = try client.get(Self.newest)
                    guard page.status == 200, let tag = page.headers["ETag"], let tagVersion = Self.version(inTag: tag),
                          let bodyVersion = version(in: page) else {
                        failures.withLock { $0.append("page: \(page.status)") }
                        return
                    }
                    if page.body == previous { kept.add(1, ordering: .relaxed) }
                    previous = page.body
                    if bodyVersion != tagVersion { failures.withLock { $0.append("tag \(tag) on version \(bodyVersion)") } }
                    if bodyVersion < floor { failures.withLock { $0.append("version \(bodyVersion) after \(floor) was answered") } }
                }
            }
            #expect(finished)
            #expect(errors.isEmpty, "\(errors.prefix(5))")
            #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0.prefix(5) })")
            // Meaningful only if some pages were asked again between two writes.
            #expect(kept.load(ordering: .relaxed) > 0)
        }
    }

    /// The version a page's tag names: `"m<version>-<hash>"`.
    private static func version(inTag tag: String) -> Int64? {
        guard tag.hasPrefix("\"m"), let dash = tag.firstIndex(of: "-") else { return nil }
        return Int64(tag[tag.index(tag.startIndex, offsetBy: 2)..<dash])
    }
}


/// The look that sends deep pages past the kept ones without parsing.
@Suite("API: which queries may ask for the newest page")
struct NewestPageQueryTests {
    @Test(arguments: [
        (nil, true), ("", true), ("limit=50", true), ("limit=5&befor", true), ("limit=50&window=3", true), ("x=before", true),
        ("before=10", false), ("limit=5&before=10", false), ("after=3&limit=2", false), ("around=4", false),
        ("limit=5&around_time=2026-01-01T00:00:00Z", false), ("%62efore=10", true), ("&&before=1", false),
    ] as [(String?, Bool)])
    func aCursorNameSkipsTheKeptPages(query: String?, mayBeNewest: Bool) {
        let target = "/v1/conversations/before/messages" + (query.map { "?" + $0 } ?? "")
        #expect(MessageRoutes.mayBeNewest(target: target) == mayBeNewest)
    }
}
