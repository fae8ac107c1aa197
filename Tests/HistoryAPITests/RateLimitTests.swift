import HTTPCore
import HistoryAPI
import HistoryAccess
import HistoryClient
import HistoryTestSupport
import HistoryWiring
import Testing

/// Token-bucket rates over real sockets: 429 `rate_limited` with
/// `Retry-After` and the `RateLimit-*` headers, keyed per token `sub` (or
/// per peer address in open mode), admin tokens exempt.
///
/// Rates are at their smallest (1 a second) with a small burst, and each
/// test sends more requests than the burst plus what could refill while
/// they run, so a slow machine cannot let them all through.
@Suite("Rate limits")
struct RateLimitTests {
    /// Sends `request` until one is refused or `attempts` run out; the answers in order.
    func untilRefused(attempts: Int = 40, _ request: () throws -> HTTPClientResponse) throws -> [HTTPClientResponse] {
        var answers: [HTTPClientResponse] = []
        for _ in 0..<attempts {
            let answer = try request()
            answers.append(answer)
            if answer.status == 429 { break }
        }
        return answers
    }

    func expectRefusal(_ response: HTTPClientResponse?, burst: Int, sourceLocation: SourceLocation = #_sourceLocation) {
        guard let response else {
            Issue.record("never refused", sourceLocation: sourceLocation)
            return
        }
        expectError(response, 429, "rate_limited", sourceLocation: sourceLocation)
        let retryAfter = response.headers["Retry-After"].flatMap { Int($0) }
        #expect(retryAfter.map { $0 >= 1 } == true, "Retry-After: \(response.headers["Retry-After"] ?? "none")",
                sourceLocation: sourceLocation)
        #expect(response.headers["RateLimit-Limit"] == String(burst), sourceLocation: sourceLocation)
        #expect(response.headers["RateLimit-Remaining"] == "0", sourceLocation: sourceLocation)
        #expect(response.headers["RateLimit-Reset"].flatMap { Int($0) }.map { $0 >= 1 } == true,
                sourceLocation: sourceLocation)
    }

    @Test func openModeWritesPastTheBurstAre429WithRetryAfterAndHeaders() throws {
        try withOpenServer({ $0.rateLimitWrites = 1; $0.rateLimitBurst = 3 }) { server in
            let client = try server.connect()
            defer { client.close() }
            let created = try client.post("/v1/conversations", #"{"id":"c"}"#)
            #expect(created.status == 201)
            #expect(created.headers["RateLimit-Limit"] == "3")
            #expect(created.headers["RateLimit-Remaining"] == "2")
            let answers = try untilRefused {
                try client.post("/v1/conversations/c/messages", #"{"sender":"ana","body":"hi"}"#)
            }
            #expect(answers.dropLast().allSatisfy { $0.status == 201 && $0.headers["RateLimit-Limit"] == "3" })
            expectRefusal(answers.last.flatMap { $0.status == 429 ? $0 : nil }, burst: 3)
            // Reads have no rate in open mode unless configured: no headers, no refusal.
            let page = try client.get("/v1/conversations/c/messages")
            #expect(page.status == 200)
            #expect(page.headers["RateLimit-Limit"] == nil)
        }
    }

    /// The router decodes path segments, so `/%761/...` is `/v1/...`: it is
    /// charged as such, not let past the limit (it was, before the rate
    /// check decoded the path as the router does).
    @Test func aPercentEncodedV1PathPaysTheSameRate() throws {
        try withOpenServer({ $0.rateLimitWrites = 1; $0.rateLimitBurst = 3 }) { server in
            let client = try server.connect()
            defer { client.close() }
            var serial = 0
            let answers = try untilRefused {
                serial += 1
                return try client.post("/%761/conversations", #"{"id":"c\#(serial)"}"#)
            }
            #expect(answers.dropLast().allSatisfy { $0.status == 201 && $0.headers["RateLimit-Limit"] == "3" },
                    "\(answers.map(\.status))")
            expectRefusal(answers.last.flatMap { $0.status == 429 ? $0 : nil }, burst: 3)
            // The same bucket as the plain path's.
            let plain = try client.post("/v1/conversations", #"{"id":"plain"}"#)
            #expect(plain.status == 429)
        }
    }

    /// A second connection's reads come out of the bucket the first drained:
    /// fewer pass before its first 429 than the burst a bucket of its own
    /// would pass. (Not "its very first read is refused": the bucket refills
    /// one read a second, so a loaded machine pausing between the two
    /// connections' reads may let one or two through; only a pause of
    /// `burst - 1` seconds could hide the difference.)
    @Test func openModeCountsEveryConnectionOfOnePeerAddressAsOneClient() throws {
        let burst = 4
        try withOpenServer({ $0.rateLimitReads = 1; $0.rateLimitBurst = burst }) { server in
            let first = try server.connect()
            defer { first.close() }
            let refused = try untilRefused { try first.get("/v1/conversations/none/messages") }
            #expect(refused.last?.status == 429)
            #expect(refused.count - 1 >= burst, "a fresh client passes at least the burst: \(refused.map(\.status))")
            let second = try server.connect()
            defer { second.close() }
            let answers = try untilRefused { try second.get("/v1/conversations/none/messages") }
            #expect(answers.count - 1 < burst, "the second connection had a bucket of its own: \(answers.map(\.status))")
            expectRefusal(answers.last.flatMap { $0.status == 429 ? $0 : nil }, burst: burst)
        }
    }

    @Test func tokensModeCountsPerSubjectAndExemptsAdmins() throws {
        try withTokenServer({ $0.rateLimitWrites = 1; $0.rateLimitBurst = 2 }) { server, minter in
            let client = try server.connect()
            defer { client.close() }
            let admin = minter.admin()
            // The admin creates and fills the conversation well past any burst.
            #expect(try client.call(.post, "/v1/conversations", token: admin, json: #"{"id":"c"}"#).status == 201)
            for user in ["ana", "bob"] {
                let added = try client.call(.put, "/v1/conversations/c/members/\(user)", token: admin, json: #"{"role":"member"}"#)
                #expect(added.status == 200 || added.status == 201, "\(added.bodyText)")
                #expect(added.headers["RateLimit-Limit"] == nil, "admin tokens are not limited")
            }
            for _ in 0..<10 {
                let posted = try client.call(.post, "/v1/conversations/c/messages", token: admin,
                                             json: #"{"sender":"ana","body":"from the backend"}"#)
                #expect(posted.status == 201)
            }
            let ana = minter.user("ana")
            let answers = try untilRefused {
                try client.call(.post, "/v1/conversations/c/messages", token: ana, json: #"{"body":"hi"}"#)
            }
            expectRefusal(answers.last.flatMap { $0.status == 429 ? $0 : nil }, burst: 2)
            // Same connection, same address: bob has his own bucket.
            let bob = try client.call(.post, "/v1/conversations/c/messages", token: minter.user("bob"), json: #"{"body":"hi"}"#)
            #expect(bob.status == 201, "\(bob.bodyText)")
            #expect(bob.headers["RateLimit-Remaining"] == "1")
        }
    }

    @Test func tokensModeLimitsByDefaultAtTheDocumentedRates() throws {
        try withTokenServer({ $0.rateLimitReads = nil; $0.rateLimitWrites = nil }) { server, minter in
            let client = try server.connect()
            defer { client.close() }
            let read = try client.call(.get, "/v1/conversations/c/messages", token: minter.user("ana"))
            #expect(read.headers["RateLimit-Limit"] == String(RateLimit.defaultReads.burst))
            let write = try client.call(.post, "/v1/conversations", token: minter.user("ana"), json: #"{"id":"c"}"#)
            #expect(write.headers["RateLimit-Limit"] == String(RateLimit.defaultWrites.burst))
            let health = try client.get("/healthz")
            #expect(health.headers["RateLimit-Limit"] == nil, "probes are not limited")
        }
    }

    @Test func zeroTurnsTheTokensModeDefaultOff() throws {
        try withTokenServer({ $0.rateLimitReads = 0; $0.rateLimitWrites = nil }) { server, minter in
            let client = try server.connect()
            defer { client.close() }
            let read = try client.call(.get, "/v1/conversations/c/messages", token: minter.user("ana"))
            #expect(read.headers["RateLimit-Limit"] == nil)
            let write = try client.call(.post, "/v1/conversations", token: minter.user("ana"), json: #"{"id":"c"}"#)
            #expect(write.headers["RateLimit-Limit"] == String(RateLimit.defaultWrites.burst))
        }
    }
}
