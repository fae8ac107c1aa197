import HistoryTestSupport
import Crypto
import Foundation
import HTTPCore
import Testing
@testable import HistoryLoad

/// The tool against a server in tokens mode: the seeders make the virtual
/// users members, every scenario runs with user tokens (HS256 and ES256)
/// without a single refused request, and a request without a token would
/// have been refused (so the tokens are what let them through).
@Suite("Tokens mode against history-server", .serialized)
struct TokensModeTests {
    static let secret = "load-tokens-secret-0123456789-abcdefghij"

    /// A server in tokens mode (an HS256 secret and an ES256 public key)
    /// over a database seeded directly with `members` users; the signers of both keys.
    static func withTokensServer<T>(members: Int = 4,
                                    _ body: (ServerProcess, _ hs256: TokenSigner, _ es256: TokenSigner) throws -> T) throws -> T {
        try withTemporaryDirectory { directory in
            let folder = directory.url
            let secrets = folder.appending(path: "secrets.txt").path
            try "k1 \(Self.secret)\n".write(toFile: secrets, atomically: true, encoding: .utf8)
            let key = P256.Signing.PrivateKey()
            let privatePath = folder.appending(path: "es-private.pem").path
            let publicPath = folder.appending(path: "es-public.pem").path
            try key.pemRepresentation.write(toFile: privatePath, atomically: true, encoding: .utf8)
            try key.publicKey.pemRepresentation.write(toFile: publicPath, atomically: true, encoding: .utf8)
            let database = folder.appending(path: "history.sqlite").path
            let plan = SeedPlan(conversations: 6, messages: 2_000, seed: 5, prefix: "load-")
            let subjects = (0..<members).map { LoadCredentials.subject(ofUser: $0, members: members) }
            let outcome = try DirectSeeder.seed(plan, path: database, progress: SeedProgress(total: 2_000, enabled: false),
                                                members: subjects)
            #expect(outcome.membersAdded == 6 * members && outcome.failures.isEmpty, "\(outcome.failures)")
            let server = try ServerProcess(database: database, extraArguments: [
                "--jwt-hs256-secret-file", secrets, "--jwt-es256-public-key", "ec1=\(publicPath)",
                // A load run is many users' traffic from one test: no per-user rates.
                "--rate-limit-reads", "0", "--rate-limit-writes", "0",
            ])
            defer { server.stop() }
            let hs256 = try SigningKeyFiles.hs256Signer(path: secrets, kid: nil)
            let es256 = try SigningKeyFiles.es256Signer(PrivateKeyArgument(kid: "ec1", path: privatePath))
            return try body(server, hs256, es256)
        }
    }

    static func status(_ endpoint: ServerEndpoint, _ method: HTTPMethod, _ target: String, authorization: String?,
                       body: [UInt8] = []) throws -> (Int, [UInt8]) {
        let connection = try HTTPClientConnection(host: endpoint.host, port: endpoint.port)
        defer { connection.close() }
        var headers = HTTPHeaders()
        if let authorization { headers.add(name: "Authorization", value: authorization) }
        if !body.isEmpty { headers.add(name: "Content-Type", value: "application/json") }
        let response = try connection.request(HTTPRequest(method: method, target: target, headers: headers, body: body))
        return (response.status, response.body)
    }

    @Test(arguments: [Scenario.scrollback, .deep, .jump, .newest, .short, .post, .tail, .mix, .inbox])
    func everyScenarioRunsWithUserTokens(_ scenario: Scenario) throws {
        try Self.withTokensServer { server, hs256, _ in
            // The server does refuse requests without a token.
            #expect(try Self.status(server.endpoint, .get, "/v1/conversations/load-0000", authorization: nil).0 == 401)
            var plan = quickPlan(server.endpoint, scenario, clients: scenario == .mix ? 6 : 4)
            if scenario == .mix { plan.mix = MixWeights(argument: "scrollback=2,deep=1,jump=1,post=1,tail=1")! }
            plan.settings.credentials = LoadCredentials(signer: hs256, members: 4)
            let report = try LoadRun.execute(plan)
            #expect(report.requests > 0)
            #expect(report.violationCount == 0, "\(report.text)")
            #expect(report.errorCount == 0, "\(report.errors)")
            if scenario == .inbox { #expect(report.checks["read markers moved", default: 0] > 0) }
            if scenario == .post || scenario == .tail || scenario == .inbox {
                #expect(report.ackedPosts > 0 && report.ackedPostsReadable == report.ackedPosts)
            }
        }
    }

    /// `typing`: one run in which the readers read all along and the typers
    /// type in every other segment only, staying connected in the others;
    /// each side with its page rate and the server's CPU per page (the
    /// server is on this machine); no refusal (rates are off).
    @Test func typingPausesItsTypersInEveryOtherSegment() throws {
        try Self.withTokensServer(members: 20) { server, hs256, _ in
            var plan = quickPlan(server.endpoint, .typing, clients: 2, seconds: 10)
            plan.writers = 20
            plan.settings.credentials = LoadCredentials(signer: hs256, members: 20)
            let outcome = try TypingComparison.execute(plan)
            let (_, pairs) = TypingComparison.segments(for: plan.duration)
            #expect(outcome.passed, "\(outcome.text)")
            #expect(outcome.alone.count == pairs && outcome.beside.count == pairs && pairs == TypingComparison.fewestPairs)
            #expect((outcome.aloneRates + outcome.withTypersRates).allSatisfy { $0 > 0 })
            // 20 typers at one call per 2 s: about 10 a second beside them; none
            // due alone (a call answered just past a boundary may land there).
            let besideCalls = outcome.beside.map { $0[.typingCalls] }, aloneCalls = outcome.alone.map { $0[.typingCalls] }
            #expect(besideCalls.allSatisfy { $0 >= 5 }, "\(besideCalls)")
            #expect(aloneCalls.allSatisfy { $0 <= 2 }, "\(aloneCalls)")
            #expect((outcome.aloneCPUPerPage ?? 0) > 0 && (outcome.withTypersCPUPerPage ?? 0) > 0)
            #expect(outcome.text.contains("server CPU per page"))
        }
    }

    /// The pause schedule: a slot due in an odd segment moves one segment on.
    @Test func pausedSlotsMoveToTheNextActiveSegment() {
        let pauses = PauseSchedule(start: 1_000, segmentNanos: 100)
        #expect(pauses.sending(1_050) == 1_050)
        #expect(pauses.sending(1_150) == 1_250)
        #expect(pauses.sending(1_299) == 1_299)
        #expect(pauses.sending(1_300) == 1_400)
        var pacer = Pacer(rate: 1e9 / 60, start: 1_000, phase: 0)   // every 60 ns
        pacer.pauses = pauses
        #expect((0..<5).map { _ in pacer.takeSlot() } == [1_000, 1_060, 1_220, 1_280, 1_440])
    }

    @Test func es256TokensLoadToo() throws {
        try Self.withTokensServer { server, _, es256 in
            var plan = quickPlan(server.endpoint, .deep)
            plan.settings.credentials = LoadCredentials(signer: es256, members: 4)
            let report = try LoadRun.execute(plan)
            #expect(report.requests > 0 && report.errorCount == 0, "\(report.errors)")
            #expect(report.passed, "\(report.text)")
        }
    }

    @Test func postsAreSentAsTheTokensSubject() throws {
        try Self.withTokensServer { server, hs256, _ in
            var plan = quickPlan(server.endpoint, .post, clients: 2, seconds: 1)
            let credentials = LoadCredentials(signer: hs256, members: 4)
            plan.settings.credentials = credentials
            let report = try LoadRun.execute(plan)
            #expect(report.errorCount == 0, "\(report.errors)")
            let admin = credentials.adminAuthorization()
            var senders = Set<String>()
            for index in 0..<4 {
                let (status, body) = try Self.status(server.endpoint, .get, "/v1/conversations/load-000\(index)/messages?limit=200",
                                                     authorization: admin)
                #expect(status == 200)
                let text = String(decoding: body, as: UTF8.self)
                for subject in ["load-user-0000", "load-user-0001"] where text.contains(#""sender":"\#(subject)""#) {
                    senders.insert(subject)
                }
            }
            #expect(!senders.isEmpty)
        }
    }

    @Test func aNonMemberSubjectIsRefused() throws {
        try Self.withTokensServer(members: 2) { server, hs256, _ in
            // Two members seeded; a third user reads nothing.
            let stranger = "Bearer " + hs256.token(subject: LoadCredentials.subject(ofUser: 2, members: 3), lifetime: 60,
                                                   now: LoadCredentials.now())
            let member = LoadCredentials(signer: hs256, members: 2).userAuthorization(ofUser: 1)
            let strangerStatus = try Self.status(server.endpoint, .get, "/v1/conversations/load-0001", authorization: stranger).0
            let memberStatus = try Self.status(server.endpoint, .get, "/v1/conversations/load-0001", authorization: member).0
            #expect(strangerStatus == 404)
            #expect(memberStatus == 200)
        }
    }

    @Test func httpSeedMakesTheUsersMembersWithAnAdminToken() throws {
        try withTemporaryDirectory { directory in
            let folder = directory.url
            let secrets = folder.appending(path: "secrets.txt").path
            try "k1 \(Self.secret)\n".write(toFile: secrets, atomically: true, encoding: .utf8)
            let server = try ServerProcess(database: folder.appending(path: "h.sqlite").path,
                                             extraArguments: ["--jwt-hs256-secret-file", secrets])
            defer { server.stop() }
            let credentials = LoadCredentials(signer: try SigningKeyFiles.hs256Signer(path: secrets, kid: "k1"), members: 3)
            let plan = SeedPlan(conversations: 3, messages: 300, seed: 2, prefix: "load-")
            let subjects = (0..<3).map { LoadCredentials.subject(ofUser: $0, members: 3) }
            let outcome = try HTTPSeeder.seed(plan, endpoint: server.endpoint, parallel: 2,
                                              progress: SeedProgress(total: 300, enabled: false),
                                              authorization: credentials.adminAuthorization(), members: subjects)
            #expect(outcome.failures.isEmpty, "\(outcome.failures)")
            #expect(outcome.messages == 300 && outcome.membersAdded == 9)
            let (status, body) = try Self.status(server.endpoint, .get, "/v1/conversations/load-0002/members",
                                                 authorization: credentials.userAuthorization(ofUser: 1))
            #expect(status == 200)
            let text = String(decoding: body, as: UTF8.self)
            #expect(subjects.allSatisfy { text.contains(#""user_id":"\#($0)""#) })
            // Seeding the members again adds none.
            let again = try HTTPSeeder.seed(SeedPlan(conversations: 3, messages: 0, seed: 2, prefix: "load-"),
                                            endpoint: server.endpoint, parallel: 1,
                                            progress: SeedProgress(total: 0, enabled: false),
                                            authorization: credentials.adminAuthorization(), members: subjects)
            #expect(again.membersAdded == 0 && again.membersExisting == 9)
        }
    }

    @Test func benchAddsATokensRowPerKeyType() throws {
        try Self.withTokensServer { server, hs256, es256 in
            var settings = BenchSuite.Settings(endpoint: server.endpoint, duration: .milliseconds(400), clients: 2, posters: 4,
                                               longPolls: 20, longPollConversations: 5, idleConnections: 10,
                                               pageRounds: 1, warmup: .zero, progress: false)
            settings.hs256 = LoadCredentials(signer: hs256, members: 4)
            settings.es256 = LoadCredentials(signer: es256, members: 4)
            settings.inbox = false   // their set-up at full size is not this test's subject
            let rows = try BenchSuite(settings: settings).run { _ in }
            let names = rows.map(\.name)
            #expect(names.count == 14, "\(names)")   // ... then the four bytes rows
            #expect(names[0].hasPrefix("Deep `before` pages, load-0000"))
            #expect(names[3] == "Deep pages, tokens HS256")
            #expect(names[4] == "Deep pages, tokens ES256")
            #expect(names[5].hasPrefix("`around` page deep in load-0000") && names[6].hasPrefix("Jump by time deep in"))
            #expect(names[9] == "Deep pages with 10 idle keep-alive connections open")
            #expect(rows[3].note.contains(" vs deep "))
            // Every row, the admin-token ones included, got through: no 401, no 403.
            #expect(rows.allSatisfy { $0.report.passed && $0.report.errorCount == 0 }, "\(rows.map { $0.report.errors })")
            #expect([0, 3, 4].allSatisfy { rows[$0].rate > 0 })
        }
    }
}
