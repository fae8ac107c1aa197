import ArgumentParser
import Testing
@testable import HistoryLoad

@Suite("Command-line values")
struct OptionTests {
    @Test func urls() {
        #expect(ServerEndpoint(argument: "http://127.0.0.1:8080") == ServerEndpoint(host: "127.0.0.1", port: 8080))
        #expect(ServerEndpoint(argument: "localhost:9000/") == ServerEndpoint(host: "127.0.0.1", port: 9000))
        #expect(ServerEndpoint(argument: "http://[::1]:81") == ServerEndpoint(host: "::1", port: 81))
        #expect(ServerEndpoint(argument: "http://h:0") == nil)
        #expect(ServerEndpoint(argument: "http://h:80/v1") == nil)
    }

    @Test func durations() {
        #expect(DurationArgument(argument: "500ms")?.duration == .milliseconds(500))
        #expect(DurationArgument(argument: "2m")?.duration == .seconds(120))
        #expect(DurationArgument(argument: "3")?.duration == .seconds(3))
        #expect(DurationArgument(argument: "-1s") == nil)
        #expect(DurationArgument(argument: "soon") == nil)
    }

    @Test func mixWeights() throws {
        let mix = try #require(MixWeights(argument: "scrollback=5,deep=3,post=1"))
        let roles = mix.assign(clients: 18)
        #expect(roles.count == 18)
        #expect(roles.filter { $0 == .scrollback }.count == 10)
        #expect(roles.filter { $0 == .deep }.count == 6)
        #expect(roles.filter { $0 == .post }.count == 2)
        #expect(MixWeights(argument: "mix=1") == nil)
        #expect(MixWeights(argument: "get=1") == nil)
        #expect(MixWeights(argument: "deep=1,deep=2") == nil)
        #expect(MixWeights(argument: "nope=1") == nil)
        // Every weighted scenario gets a user when there are enough users.
        #expect(Set(MixWeights.standard.assign(clients: 5)) == Set(MixWeights.standard.weights.map(\.scenario)))
    }

    @Test func seedSizesSumAndSkew() {
        let plan = SeedPlan(conversations: 1_000, messages: 1_000_000, seed: 1, prefix: "load-")
        let sizes = plan.sizes()
        #expect(sizes.reduce(0, +) == 1_000_000)
        #expect(sizes[0] == 400_000)
        #expect(sizes.dropFirst().allSatisfy { $0 <= sizes[1] })
        #expect(sizes.filter { $0 < 1_000 }.count > 500)
        #expect(plan.conversationID(7) == "load-0007" && plan.conversationID(12_345) == "load-12345")
        let chunks = plan.chunks(of: 500)
        #expect(chunks.reduce(0) { $0 + $1.count } == 1_000_000)
    }

    @Test func commandsParse() throws {
        let run = try RunCommand.parse(["--url", "http://127.0.0.1:1", "--scenario", "mix", "--mix", "deep=1,tail=2",
                                        "--clients", "3", "--duration", "2s", "--rate", "100", "--json", "/tmp/x.json",
                                        "--connections", "5"])
        #expect(run.scenario == .mix && run.clients == 3 && run.rate == 100 && run.connections == 5)
        #expect(run.transport == .loop && run.loops == nil)
        let raw = try RunCommand.parse(["--url", "http://127.0.0.1:1", "--scenario", "get", "--path", "/file.json",
                                        "--transport", "threads", "--loops", "4"])
        #expect(raw.scenario == .get && raw.path == "/file.json" && raw.transport == .threads && raw.loops == 4)
        #expect(throws: (any Error).self) { try RunCommand.parse(["--url", "http://127.0.0.1:1", "--path", "file"]) }
        #expect(throws: (any Error).self) { try RunCommand.parse(["--url", "http://127.0.0.1:1", "--loops", "0"]) }
        #expect(throws: (any Error).self) { try SeedCommand.parse(["--conversations", "2"]) }
        #expect(throws: (any Error).self) { try RunCommand.parse(["--url", "http://127.0.0.1:1", "--clients", "0"]) }
        let inbox = try RunCommand.parse(["--url", "http://127.0.0.1:1", "--scenario", "inbox", "--members", "8", "--writers", "2"])
        #expect(inbox.scenario == .inbox && inbox.tokens.members == 8 && inbox.writers == 2)
        let seed = try SeedCommand.parse(["--url", "http://127.0.0.1:1", "--add-members", "--members", "5"])
        #expect(seed.addMembers && seed.tokens.memberSubjects == (0..<5).map { LoadCredentials.subject(ofUser: $0, members: 5) })
        let bench = try BenchCommand.parse(["--url", "http://127.0.0.1:1", "--inbox-only", "--inbox-pollers", "50", "--server-pid", "7"])
        #expect(bench.inboxOnly && !bench.noInbox && bench.inboxPollers == 50 && bench.serverPID == 7)
        #expect(throws: (any Error).self) { try BenchCommand.parse(["--url", "http://127.0.0.1:1", "--inbox-only", "--no-inbox"]) }
        #expect(throws: (any Error).self) { try BenchCommand.parse(["--url", "http://127.0.0.1:1", "--inbox-conversations", "3"]) }
    }

    /// The inbox scenario: inbox users beside writers that share the rate.
    @Test func inboxRolesAreReadersAndPacedWriters() {
        var plan = LoadPlan(endpoint: ServerEndpoint(host: "127.0.0.1", port: 1), scenario: .inbox, clients: 8, duration: .seconds(1))
        plan.rate = 40
        let roles = LoadRun.roles(for: plan)
        #expect(roles.filter { $0.scenario == .inbox && !$0.paced }.count == 8)
        let writers = roles.filter { $0.scenario == .post }
        #expect(writers.count == 2 && writers.allSatisfy { $0.paced && $0.rate == 20 })
        var settings = RunSettings()
        settings.inboxUsers = 3
        #expect(settings.inboxUser(ofUser: 4) == (id: "load-user-0001", path: "load-user-0001"))
    }
}

@Suite("Bench rounds")
struct BenchRoundTests {
    @Test func theMedianRoundIsTheMiddleRate() {
        #expect(BenchSuite.medianIndex([15_000, 13_000, 17_000]) == 0)
        #expect(BenchSuite.medianIndex([9, 1, 5, 7, 3]) == 2)
        // An even count takes the lower middle one.
        #expect(BenchSuite.medianIndex([4, 1, 3, 2]) == 3)
        #expect(BenchSuite.medianIndex([42]) == 0)
    }

    @Test func ratiosAreMediansShownAsSignedPercentages() {
        #expect(BenchSuite.median([1.31, 1.08, 1.15]) == 1.15)
        #expect(BenchSuite.median([1.0, 1.2]) == 1.1)
        #expect(BenchSuite.percent(1.15) == "+15%")
        #expect(BenchSuite.percent(0.9) == "-10%")
        #expect(BenchSuite.percent(1) == "+0%")
    }

    /// The jump row's note: the median ratio over all pairs and over each
    /// order (the second request of a pair finds the rows warm).
    @Test func jumpRatioNoteSplitsByOrder() {
        let note = BenchSuite.jumpRatioNote(jump: [120, 110, 130, 100], around: [100, 100, 100, 100],
                                            aroundFirst: [false, true, false, true])
        #expect(note == "median latency ratio to `around`: +15% (jump first +25%, `around` first +5%)")
        #expect(BenchSuite.jumpRatioNote(jump: [120], around: [100], aroundFirst: [false])
            == "median latency ratio to `around`: +20% (jump first +20%, `around` first none)")
        #expect(BenchSuite.jumpRatioNote(jump: [], around: [], aroundFirst: [])
            == "median latency ratio to `around`: none (jump first none, `around` first none)")
    }
}
