import ArgumentParser
import Foundation
import HTTPCore
import HistoryTestSupport
import Testing
@testable import HistoryLoad

/// `history-load abuse` against the real server binary: every attack runs
/// with tiny counts beside a few normal users, and the report has a row per
/// phase with the server's memory measured from /proc.
@Suite("abuse against history-server", .serialized)
struct AbuseTests {
    static func tinyPlan(_ server: ServerProcess) -> AbusePlan {
        var plan = AbusePlan(endpoint: server.endpoint)
        plan.attackDuration = .seconds(1)
        plan.population = 3
        plan.posters = 2
        plan.postRate = 20
        plan.slowloris = 6
        plan.drip = .milliseconds(200)
        plan.idle = 7
        plan.nonReaders = 2
        // Pages of 2 big messages, once each: a debug server takes seconds over a page of 200.
        plan.nonReaderLimit = 2
        plan.nonReaderRequests = 1
        plan.longPolls = 12
        plan.pollsPerClient = 5
        plan.badTokenSockets = 2
        plan.liveConversations = 2
        plan.serverPID = server.processIdentifier
        plan.progress = false
        return plan
    }

    @Test func everyPhaseRunsAndIsReported() throws {
        try withSeededServer(conversations: 6, messages: 1_500) { server, _ in
            let report = try AbuseRun.execute(Self.tinyPlan(server))
            #expect(report.phases.map(\.attack) == [nil] + Attack.allCases.map(Optional.some))
            for phase in report.phases {
                #expect(phase.normalRequests > 0, "\(phase.name)")
                #expect(phase.posts > 0, "\(phase.name)")
                #expect((phase.peakRSSBytes ?? 0) > 1_000_000, "\(phase.name)")
                #expect(phase.violations == 0, "\(phase.name)")
            }
            let outcomes = Dictionary(uniqueKeysWithValues: report.phases.compactMap { phase in phase.attack.map { ($0, phase.outcome) } })
            #expect(outcomes[.slowloris]??.connected == 6)
            #expect(outcomes[.idle]??.connected == 7)
            #expect(outcomes[.nonReaders]??.connected == 2)
            #expect(outcomes[.nonReaders]??.requestsSent == 2)
            // The filtered polls parked, and were answered 200 when their wait ran out or refused: never a wrong request.
            #expect(outcomes[.longPolls]??.connected == 12)
            #expect(outcomes[.longPolls]??.statuses.keys.allSatisfy { $0 == 200 || $0 == 429 || $0 == 503 } == true)
            let flood = try #require(outcomes[.flood] ?? nil)
            #expect(flood.answers > 10)
            // Today's server may or may not limit the flood, but every answer is a created post or a refusal.
            #expect(flood.statuses.keys.allSatisfy { $0 == 201 || $0 == 429 }, "\(flood.statuses)")
            // Open mode reads no token: the forged ones are served like any read, and that goal is skipped.
            let forged = try #require(outcomes[.badTokens] ?? nil)
            #expect(forged.answers > 10 && forged.statuses.keys.allSatisfy { $0 == 200 }, "\(forged.statuses)")
            #expect(report.goals.count == 5, "\(report.text)")
            #expect(report.goals.dropLast().allSatisfy { ["PASS", "FAIL"].contains($0.verdict) }, "\(report.goals)")
            #expect(report.goals.last?.verdict == "SKIP", "\(report.goals)")
            let text = report.text
            for phase in report.phases { #expect(text.contains(phase.name)) }
            #expect(text.contains("goals:") && text.contains("result: "))
            // The setup filled the conversation of the largest pages, through the API.
            let big = try #require(try conversationEntry(server.endpoint, AbuseSetup.bigConversation))
            #expect(big.messageCount == Int64(AbuseSetup.bigMessages))
            #expect(server.isRunning)
        }
    }

    @Test func theServerIsFoundFromItsPort() throws {
        try withTemporaryDirectory { directory in
            let server = try ServerProcess(database: directory.databasePath)
            defer { server.stop() }
            #expect(ServerMemory.pid(listeningOn: server.port) == server.processIdentifier)
            #expect((ServerMemory.residentBytes(pid: server.processIdentifier) ?? 0) > 1_000_000)
        }
    }

    @Test func attacksOnlyThisMachine() throws {
        #expect(throws: (any Error).self) { try AbuseCommand.parse(["--url", "http://10.0.0.1:8080"]) }
        #expect(throws: (any Error).self) { try AbuseCommand.parse(["--url", "http://192.168.1.2:80"]) }
        #expect(throws: (any Error).self) { try AbuseCommand.parse(["--url", "http://example.com:8080"]) }
        #expect(throws: (any Error).self) { try AbuseCommand.parse(["--url", "http://[2001:db8::1]:8080"]) }
        #expect(throws: (any Error).self) { try AbuseCommand.parse(["--url", "http://128.0.0.1:8080"]) }
        // A plan built in code is refused too, before a single connection.
        #expect(throws: LoadError.self) { try AbuseRun.execute(AbusePlan(endpoint: ServerEndpoint(host: "10.0.0.1", port: 8080))) }
        for url in ["http://127.0.0.1:8080", "localhost:9000", "http://[::1]:81", "http://127.1.2.3:80"] {
            #expect(throws: Never.self) { try AbuseCommand.parse(["--url", url]) }
        }
    }

    @Test func optionsAreChecked() throws {
        let command = try AbuseCommand.parse(["--url", "http://127.0.0.1:8080", "--attacks", "flood,slowloris", "--attack-seconds", "2s"])
        #expect(command.attacks.attacks == [.slowloris, .flood])
        #expect(command.attackSeconds.duration == .seconds(2))
        #expect(command.population == 32 && command.slowloris == 1_000 && command.longPolls == 5_000 && command.nonReaders == 100)
        #expect(AttackList(argument: "flood,nope") == nil)
        for bad in [["--population", "0"], ["--slowloris", "0"], ["--post-rate", "-1"], ["--page-size", "201"],
                    ["--server-pid", "0"], ["--attack-seconds", "11m"]] {
            #expect(throws: (any Error).self) { try AbuseCommand.parse(["--url", "http://127.0.0.1:8080"] + bad) }
        }
    }

    @Test func attackersComeFromTheirOwnLoopbackAddresses() {
        #expect(LoopbackAddress.source(of: .slowloris, client: 0) == "127.2.0.1")
        #expect(LoopbackAddress.source(of: .nonReaders, client: 251) == "127.4.1.2")
        #expect(Set((0..<100).map { LoopbackAddress.source(of: .longPolls, client: $0) }).count == 100)
    }
}

/// Tokens mode: the normal users send their own tokens, and every attacker
/// gets a subject of its own that the setup made a member of what it attacks:
/// the flood's posts are created (or limited), never refused as a stranger's.
@Suite("abuse in tokens mode", .serialized)
struct AbuseTokensTests {
    @Test func attackersAndUsersSendTheirOwnTokens() throws {
        try TokensModeTests.withTokensServer { server, hs256, _ in
            var plan = AbuseTests.tinyPlan(server)
            plan.attacks = [.longPolls, .flood]
            plan.credentials = LoadCredentials(signer: hs256, members: 4)
            let report = try AbuseRun.execute(plan)
            #expect(report.phases.count == 3)
            for phase in report.phases {
                #expect(phase.normalRequests > 0 && phase.posts > 0, "\(phase.name)")
                #expect(phase.errors.keys.allSatisfy { !$0.contains(" 401 ") && !$0.contains(" 404 ") }, "\(phase.errors)")
            }
            let flood = try #require(report.phases.last?.outcome)
            #expect(flood.answers > 0)
            #expect(flood.statuses.keys.allSatisfy { $0 == 201 || $0 == 429 }, "\(flood.statuses)")
            // The poller's subject is a member of the conversations it polls: a poll from it is answered.
            let poller = "Bearer " + hs256.token(subject: AbuseSetup.pollerSubject(0), lifetime: 60, now: LoadCredentials.now())
            let (status, _) = try TokensModeTests.status(server.endpoint, .get, "/v1/conversations/load-0000/events?since=0",
                                                         authorization: poller)
            #expect(status == 200)
        }
    }
}
