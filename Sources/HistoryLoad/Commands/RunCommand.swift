import ArgumentParser

struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Load a server with virtual users for a while, checking every answer, and report.",
        discussion: """
            Closed loop by default: each user sends its next request when the last one is answered. \
            With --rate, open loop: requests are due on a fixed schedule and latency counts from when \
            a request was due, so a stalled server is charged for the wait it causes (no coordinated omission). \
            Exits 1 when an invariant was violated.
            """
    )

    @Option(help: "The server under test, e.g. http://127.0.0.1:8080.")
    var url: ServerEndpoint

    @Option(help: "What the users do: \(Scenario.allCases.map(\.rawValue).joined(separator: ", ")).")
    var scenario: Scenario = .scrollback

    @Option(help: "Virtual users, one keep-alive connection each (tail: long-polling readers).")
    var clients: Int = 32

    @Option(help: "How long to load, e.g. 30s, 2m.")
    var duration: DurationArgument = DurationArgument(.seconds(10))

    @Option(help: "Open loop: requests per second in total (tail, inbox: posts per second of the writers; default 100, 20).")
    var rate: Double?

    @Option(help: "Users per scenario for --scenario mix, e.g. scrollback=5,deep=3,post=1.")
    var mix: MixWeights = .standard

    @Option(help: "Tail and inbox: posting clients beside the readers (default: clients / 8, inbox: clients / 4); typing: typers (default 1000); feed: posters (default 64).")
    var writers: Int?

    @Option(help: "tail, inbox, feed: the writers post through this server instead, another instance on the same PostgreSQL database (cross-instance delivery).")
    var writerURL: ServerEndpoint?

    @Option(help: "Extra idle keep-alive connections held open during the run.")
    var connections: Int = 0

    @Option(help: "Messages per page.")
    var pageSize: Int = 50

    @Option(help: "How many conversations (load-0000...) posts and long-polls share.")
    var liveConversations: Int = 16

    @Option(help: "Longest long-poll wait, in seconds (1 to 60).")
    var longPoll: Int = 10

    @Option(help: "Seed of the users' random choices.")
    var seed: UInt64 = 1

    @Option(help: "Prefix of the conversation ids to discover.")
    var prefix: String = "load-"

    @Option(help: "get: the target to request, e.g. /file.json.")
    var path: String = "/"

    @Option(help: "loop: a few event-loop threads over non-blocking connections; threads: one blocking thread per user.")
    var transport: Transport = .loop

    @Option(help: "Event-loop threads (default: one per CPU).")
    var loops: Int?

    @Option(help: "Also write the report as JSON to this file.")
    var json: String?

    @Flag(help: "No progress line on stderr.")
    var quiet = false

    @Flag(help: "Do not send Accept-Encoding: gzip (every answer comes identity).")
    var noGzip = false

    @Flag(help: "revalidate: re-read the pages held without If-None-Match (never a 304).")
    var noEtag = false

    @Option(help: "typing: the pid of the PostgreSQL postmaster the server uses, on this machine: its CPU per page (with every backend's) on each side.")
    var databasePid: Int32?

    @OptionGroup(title: "Tokens mode")
    var tokens: TokenModeOptions

    func validate() throws {
        guard (1...50_000).contains(clients) else { throw ValidationError("--clients must be 1 to 50000.") }
        guard rate.map({ $0 > 0 && $0.isFinite }) ?? true else { throw ValidationError("--rate must be a positive number.") }
        guard (1...200).contains(pageSize) else { throw ValidationError("--page-size must be 1 to 200.") }
        guard (1...60).contains(longPoll) else { throw ValidationError("--long-poll must be 1 to 60 seconds.") }
        guard connections >= 0, liveConversations >= 1 else { throw ValidationError("--connections must be >= 0, --live-conversations >= 1.") }
        guard writers.map({ $0 >= 1 }) ?? true else { throw ValidationError("--writers must be at least 1.") }
        guard loops.map({ (1...1024).contains($0) }) ?? true else { throw ValidationError("--loops must be 1 to 1024.") }
        guard path.hasPrefix("/") else { throw ValidationError("--path must start with /.") }
    }

    func run() throws {
        if scenario == .streams { return try runStreams() }
        var plan = LoadPlan(endpoint: url, scenario: scenario, clients: clients, duration: duration.duration, rate: rate)
        plan.mix = mix
        plan.writers = writers
        plan.writerEndpoint = writerURL
        plan.idleConnections = connections
        plan.settings.pageSize = pageSize
        plan.settings.liveConversations = liveConversations
        plan.settings.longPollSeconds = longPoll
        plan.settings.seed = seed
        plan.conversationPrefix = prefix
        plan.progress = !quiet
        plan.settings.rawPath = path
        plan.transport = transport
        plan.loopThreads = loops
        plan.settings.credentials = try tokens.credentials()
        plan.settings.inboxUsers = tokens.members
        plan.settings.acceptsGzip = !noGzip
        plan.settings.sendsETags = !noEtag
        if scenario == .typing {
            let comparison = try TypingComparison.execute(plan, databasePID: databasePid)
            print(comparison.text)
            if let json { try comparison.report.writeJSON(to: json) }
            if !comparison.passed { throw ExitCode(1) }
            return
        }
        if scenario == .feed {
            let outcome = try ServerFeedRun.execute(plan)
            print(outcome.text)
            if let json { try outcome.report.writeJSON(to: json) }
            if !outcome.passed { throw ExitCode(1) }
            return
        }
        let report = try LoadRun.execute(plan)
        print(report.text)
        if let json { try report.writeJSON(to: json) }
        if !report.passed { throw ExitCode(1) }
    }

    /// `--scenario streams`: its own driver (`StreamsRun`), since a stream
    /// is no request-and-answer for the load loop.
    private func runStreams() throws {
        let plan = StreamsRun.Plan(endpoint: url, streams: clients, conversations: liveConversations,
                                   writers: writers ?? 1, postsPerSecond: rate ?? 20, duration: duration.duration,
                                   authorization: try tokens.credentials()?.adminAuthorization(), progress: !quiet)
        let report = try StreamsRun(plan: plan).execute()
        print(report.text)
        if !report.passed { throw ExitCode(1) }
    }
}
