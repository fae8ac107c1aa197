import Foundation
import HTTPCore
import HistoryAPI
import HistoryClient
import HistoryStore
import HistoryTestSupport
import HistoryWiring
import Testing

/// docs/API.md, "Edges": what an attacker tries at the edge of the API, each
/// over real sockets against a whole in-process server.
@Suite("Edges")
struct EdgeTests {
    // MARK: - Creating a conversation

    /// A user may not choose the id (whether it is free would tell a
    /// stranger it exists); the id it gets carries at least 96 random bits.
    @Test func aUserTokenMayNotChooseAConversationID() throws {
        try withTokenServer { server, minter in
            let client = try server.connect()
            defer { client.close() }
            let admin = minter.admin()
            #expect(try client.call(.post, "/v1/conversations", token: admin, json: #"{"id":"taken"}"#).status == 201)

            let ana = minter.user("ana")
            for id in ["taken", "free"] {
                let refused = try client.call(.post, "/v1/conversations", token: ana, json: #"{"id":"\#(id)"}"#)
                expectError(refused, 403, "forbidden")
            }
            // Nothing was created under the free id.
            expectError(try client.call(.get, "/v1/conversations/free", token: admin), 404, "conversation_not_found")

            var ids: Set<String> = []
            for _ in 0..<3 {
                let created = try client.call(.post, "/v1/conversations", token: ana, json: #"{"title":"t"}"#)
                #expect(created.status == 201, "\(created.bodyText)")
                let id = try created.decode(HistoryConversation.self).id
                // 62 symbols a character: 17 characters are more than 96 bits.
                #expect(id.count >= 17 && id.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }, "\(id)")
                ids.insert(id)
            }
            #expect(ids.count == 3)
        }
    }

    @Test func openModeMayChooseTheID() throws {
        try withOpenServer({ _ in }) { server in
            let client = try server.connect()
            defer { client.close() }
            #expect(try client.call(.post, "/v1/conversations", json: #"{"id":"mine"}"#).status == 201)
        }
    }

    // MARK: - Failed authentication is rate-limited

    /// A flood of bad tokens from one address is charged to its read
    /// bucket: past the burst it gets 429 with `Retry-After`, while a
    /// token verified before the flood is still served. The bucket refills
    /// one read a second, so a stalled machine may let one more through,
    /// never most of the flood.
    @Test(arguments: [false, true])
    func badTokensAreChargedToTheirAddress(es256: Bool) throws {
        try withTokenServer({ configuration in
            configuration.rateLimitReads = 1
            configuration.rateLimitBurst = 5
        }) { server, minter in
            let client = try server.connect()
            defer { client.close() }
            let good = minter.user("ana")
            #expect(try client.call(.get, "/v1/users/ana/conversations", token: good).status == 200)
            let valid = es256 ? minter.userES256("eve") : minter.user("eve")
            let forged = String(valid.dropLast(4)) + (valid.hasSuffix("AAAA") ? "BBBB" : "AAAA")
            var statuses: [Int] = []
            for round in 0..<12 {
                let token: String? = switch round % 3 {
                case 0: forged
                case 1: nil
                default: "not-a-jwt"
                }
                let response = try client.call(.get, "/v1/conversations/x/messages", token: token)
                statuses.append(response.status)
                if response.status == 429 {
                    expectError(response, 429, "rate_limited")
                    #expect(response.headers["Retry-After"] != nil)
                } else {
                    #expect(response.status == 401, "\(response.bodyText)")
                    #expect(response.headers["RateLimit-Remaining"] != nil)
                }
            }
            #expect(statuses.prefix(5).allSatisfy { $0 == 401 }, "\(statuses)")
            #expect(statuses.dropFirst(5).filter { $0 == 429 }.count >= 5, "\(statuses)")
            // The user's own token, verified before, is not the flood's.
            #expect(try client.call(.get, "/v1/users/ana/conversations", token: good).status == 200)
        }
    }

    /// A valid token's first check takes nothing from its address: many
    /// users behind one address are not throttled by signing in.
    @Test func validTokensAreNotChargedToTheirAddress() throws {
        try withTokenServer({ configuration in
            configuration.rateLimitReads = 3
            configuration.rateLimitBurst = 3
        }) { server, minter in
            let client = try server.connect()
            defer { client.close() }
            for index in 0..<10 {
                let user = "user\(index)"
                let response = try client.call(.get, "/v1/users/\(user)/conversations", token: minter.user(user))
                #expect(response.status == 200, "\(response.bodyText)")
            }
        }
    }

    // MARK: - Host

    @Test func http11WithoutHostIsRefused() throws {
        try withOpenServer({ _ in }) { server in
            let client = try server.connect()
            defer { client.close() }
            try client.sendRaw(Array("GET /healthz HTTP/1.1\r\n\r\n".utf8))
            expectError(try client.receive(), 400, "bad_request")

            let old = try server.connect()
            defer { old.close() }
            try old.sendRaw(Array("GET /healthz HTTP/1.0\r\n\r\n".utf8))
            #expect(try old.receive().status == 200)
        }
    }

    /// In absolute form the target's host is what is checked, whatever
    /// `Host` says (RFC 9112 §3.2.2).
    @Test func absoluteFormIsCheckedByItsHost() throws {
        try withOpenServer({ _ in }) { server in
            let cases: [(target: String, host: String, status: Int)] = [
                ("http://evil.example/v1/conversations/x", "localhost", 421),
                ("http://evil.example:\(server.port)/healthz", "127.0.0.1", 421),
                ("http://localhost:\(server.port)/healthz", "evil.example", 200),
                ("http://127.0.0.1/healthz", "127.0.0.1", 200),
            ]
            for (target, host, status) in cases {
                let client = try server.connect()
                defer { client.close() }
                try client.sendRaw(Array("GET \(target) HTTP/1.1\r\nHost: \(host)\r\n\r\n".utf8))
                let response = try client.receive()
                #expect(response.status == status, "\(target) Host: \(host): \(response.bodyText)")
                if status == 421 { #expect(response.errorCode == "misdirected_request") }
            }
        }
    }

    // MARK: - Key files

    @Test func aSecretFileOthersMayReadIsUsedWithAWarning() throws {
        try withTemporaryDirectory { folder in
            let path = folder.url.appending(path: "hs256.keys").path
            try TokenMinter().secretFile.write(toFile: path, atomically: true, encoding: .utf8)
            for (mode, warns) in [(0o644, true), (0o640, true), (0o600, false), (0o400, false)] {
                #expect(chmod(path, mode_t(mode)) == 0)
                let lines = LockedLines()
                var configuration = RunningServer.defaultConfiguration
                configuration.port = 0
                configuration.databasePath = folder.url.appending(path: "h\(mode).sqlite").path
                configuration.jwtHS256SecretFile = path
                let application = try HistoryApplication(configuration: configuration,
                                                         logger: Logger(level: .warning, sink: lines.append))
                try application.start()
                defer { application.shutdownAndWait(gracePeriod: .seconds(1)) }
                let warned = lines.all.contains { $0.contains("warning") && $0.contains(path) }
                #expect(warned == warns, "mode \(String(mode, radix: 8)): \(lines.all)")
                // Used all the same: tokens mode.
                let client = try HTTPClientConnection(port: application.port)
                defer { client.close() }
                expectError(try client.call(.get, "/v1/conversations/x"), 401, "missing_token")
            }
        }
    }

    // MARK: - CORS, `me`

    @Test func corsAnswersVaryByOriginAndExposeTheRateHeaders() throws {
        try withOpenServer({ configuration in
            configuration.corsOrigins = ["https://app.example"]
            configuration.rateLimitReads = 100
        }) { server in
            let client = try server.connect()
            defer { client.close() }
            let listed = try client.call(.get, "/v1/conversations/x", headers: [("Origin", "https://app.example")])
            #expect(listed.headers.values(of: "Vary").contains("Origin"))
            let exposed = (listed.headers["Access-Control-Expose-Headers"] ?? "").split(separator: ",")
                .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            for name in ["location", "www-authenticate", "allow", "etag", "retry-after",
                         "ratelimit-limit", "ratelimit-remaining", "ratelimit-reset"] {
                #expect(exposed.contains(name), "\(exposed)")
            }
            let other = try client.call(.get, "/v1/conversations/x", headers: [("Origin", "https://evil.example")])
            #expect(other.headers["Access-Control-Allow-Origin"] == nil)
            #expect(other.headers.values(of: "Vary").contains("Origin"))
            let none = try client.call(.get, "/healthz")
            #expect(none.headers.values(of: "Vary").contains("Origin"))
        }
    }

    /// `me` is the caller in member paths too: a member leaves with
    /// `DELETE .../members/me`, and no user is literally called `me`.
    @Test func meNamesTheCallerInMemberPaths() throws {
        try withTokenServer { server, minter in
            let client = try server.connect()
            defer { client.close() }
            let ana = minter.user("ana"), bob = minter.user("bob")
            let created = try client.call(.post, "/v1/conversations", token: ana, json: "{}")
            let id = try created.decode(HistoryConversation.self).id
            #expect(try client.call(.put, "/v1/conversations/\(id)/members/bob", token: ana, json: "{}").status == 201)
            #expect(try client.call(.get, "/v1/conversations/\(id)", token: bob).status == 200)
            let left = try client.call(.delete, "/v1/conversations/\(id)/members/me", token: bob)
            #expect(left.status == 200, "\(left.bodyText)")
            #expect(left.bodyText.contains("true"), "\(left.bodyText)")
            expectError(try client.call(.get, "/v1/conversations/\(id)", token: bob), 404, "conversation_not_found")
            // The owner's own role, through `me`: unchanged, not a new member named "me".
            let own = try client.call(.put, "/v1/conversations/\(id)/members/me", token: ana, json: #"{"role":"owner"}"#)
            #expect(own.status == 200, "\(own.bodyText)")
            #expect(own.bodyText.contains("\"ana\""), "\(own.bodyText)")
        }
        try withOpenServer({ _ in }) { server in
            let client = try server.connect()
            defer { client.close() }
            #expect(try client.call(.post, "/v1/conversations", json: #"{"id":"c"}"#).status == 201)
            expectError(try client.call(.put, "/v1/conversations/c/members/me", json: "{}"), 400, "invalid_user_id")
        }
    }
}

/// Log lines collected from any thread.
final class LockedLines: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []

    @Sendable func append(_ line: String) {
        lock.lock()
        lines.append(line)
        lock.unlock()
    }

    var all: [String] {
        lock.lock()
        defer { lock.unlock() }
        return lines
    }
}
