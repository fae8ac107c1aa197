import ArgumentParser

struct AbuseCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "abuse",
        abstract: "Attack a server on this machine while normal users load it, and report what the attacks cost them.",
        discussion: """
            Phases, each --attack-seconds long: the normal users alone (scrollback screens and a few posters), \
            then beside each attack in turn: slowloris heads, idle sockets of one client, clients that never \
            read the largest pages, long-polls filtered out of range while the posters post, one client \
            posting as fast as it can, one client reading on many sockets with a forged token. Each attacking client connects from its own 127.x.y.z, so a server that \
            limits per peer address tells it from the normal users (127.0.0.1). The server's memory is sampled \
            from /proc through each phase. Loopback servers only. Seed first (load-0000...); the tool creates \
            abuse-big (200 messages of 16 KiB) and abuse-flood itself. With --check, exits 1 when a goal fails.
            """
    )

    @Option(help: "The server under test, on this machine: http://127.0.0.1:PORT or http://[::1]:PORT.")
    var url: ServerEndpoint

    @Option(help: "The server's process id, for its memory (default: found from the listening port, best effort).")
    var serverPID: Int32?

    @Option(help: "How long each phase loads the server beside its attack, e.g. 10s.")
    var attackSeconds: DurationArgument = DurationArgument(.seconds(10))

    @Option(help: "Which attacks, in order: \(Attack.allCases.map(\.rawValue).joined(separator: ",")).")
    var attacks: AttackList = .all

    @Option(help: "Normal scrollback users, one keep-alive connection each.")
    var population: Int = 32

    @Option(help: "Normal posters beside them.")
    var posters: Int = 4

    @Option(help: "Posts per second of the normal posters, in all.")
    var postRate: Double = 20

    @Option(help: "Slowloris sockets.")
    var slowloris: Int = 1_000

    @Option(help: "Slowloris: the pause between two bytes of a socket's head.")
    var drip: DurationArgument = DurationArgument(.seconds(2))

    @Option(help: "Idle sockets of the one idle client.")
    var idle: Int = 1_000

    @Option(help: "Clients that ask for limit=200 pages of abuse-big and never read.")
    var nonReaders: Int = 100

    @Option(help: "Long-polls filtered by min_id/max_id to ids no new message has.")
    var longPolls: Int = 5_000

    @Option(help: "Long-polls per attacking client (address and token).")
    var pollsPerClient: Int = 100

    @Option(help: "Sockets of the bad-tokens client, each sending a request as soon as the last is answered.")
    var badTokenSockets: Int = 32

    @Option(help: "Conversations (load-0000...) the posters post to and the long-polls park on.")
    var liveConversations: Int = 4

    @Option(help: "Messages per page of the scrollback users.")
    var pageSize: Int = 50

    @Flag(help: "Exit 1 when a goal fails.")
    var check = false

    @Option(help: "Also write the report as JSON to this file.")
    var json: String?

    @Flag(help: "No progress on stderr.")
    var quiet = false

    @OptionGroup(title: "Tokens mode (the normal users and every attacker get their own token; the flood one subject)")
    var tokens: TokenModeOptions

    func validate() throws {
        guard LoopbackAddress.isLoopback(url.host) else {
            throw ValidationError("--url must be on this machine (127.0.0.0/8, ::1 or localhost): abuse attacks no other host.")
        }
        guard attackSeconds.duration <= .seconds(600) else { throw ValidationError("--attack-seconds must be at most 10m.") }
        guard (1...10_000).contains(population), (0...1_000).contains(posters) else {
            throw ValidationError("--population must be 1 to 10000, --posters 0 to 1000.")
        }
        guard postRate > 0, postRate.isFinite else { throw ValidationError("--post-rate must be a positive number.") }
        guard (1...100_000).contains(slowloris), (1...100_000).contains(idle), (1...10_000).contains(nonReaders),
              (1...100_000).contains(longPolls) else {
            throw ValidationError("--slowloris, --idle and --long-polls must be 1 to 100000, --non-readers 1 to 10000.")
        }
        guard (1...1_000).contains(badTokenSockets) else { throw ValidationError("--bad-token-sockets must be 1 to 1000.") }
        guard pollsPerClient >= 1, liveConversations >= 1, (1...200).contains(pageSize) else {
            throw ValidationError("--polls-per-client and --live-conversations must be at least 1, --page-size 1 to 200.")
        }
        if let serverPID, serverPID <= 0 { throw ValidationError("--server-pid must be a process id.") }
    }

    func run() throws {
        var plan = AbusePlan(endpoint: url)
        plan.attacks = attacks.attacks
        plan.attackDuration = attackSeconds.duration
        plan.population = population
        plan.posters = posters
        plan.postRate = postRate
        plan.slowloris = slowloris
        plan.drip = drip.duration
        plan.idle = idle
        plan.nonReaders = nonReaders
        plan.longPolls = longPolls
        plan.pollsPerClient = pollsPerClient
        plan.badTokenSockets = badTokenSockets
        plan.liveConversations = liveConversations
        plan.pageSize = pageSize
        plan.serverPID = serverPID
        plan.credentials = try tokens.credentials()
        plan.progress = !quiet
        let report = try AbuseRun.execute(plan)
        print(report.text)
        if let json { try report.writeJSON(to: json) }
        if check && !report.passed { throw ExitCode(1) }
    }
}
