import ArgumentParser
import Foundation

struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Run the fixed benchmark suite and print README's performance table (Markdown).",
        discussion: """
            Rows: deep `before` pages of the largest conversation, its newest page, the newest page of a \
            random short conversation, deep pages again with idle keep-alive connections held open (those \
            four interleaved in --page-rounds rounds, each row showing its median round), appends with 64 posters, post-to-delivery latency with parked \
            long-polls; then the inbox rows: an inbox page of a user with 10 conversations and of one with 10,000, appends to a \
            conversation with 1,000 members and to one with 2 (each pair interleaved in rounds), and post-to-inbox-feed latency \
            with 10,000 users parked on their inbox feeds, with the server's peak RSS (the inbox rows make their own users and \
            conversations on the first run). Seed first, \
            e.g. `history-load seed --direct data/history.sqlite --conversations 1000 --messages 1000000`. \
            Each row checks the answers like `run` does.
            """
    )

    @Option(help: "The server under test, e.g. http://127.0.0.1:8080.")
    var url: ServerEndpoint

    @Option(help: "How long each row loads the server.")
    var duration: DurationArgument = DurationArgument(.seconds(5))

    @Option(help: "Connections of the page rows.")
    var clients: Int = 32

    @Option(help: "Concurrent posters of the append row.")
    var posters: Int = 64

    @Option(help: "Long-polls parked in the delivery row (the server's --max-connections must allow them).")
    var longPolls: Int = 10_000

    @Option(help: "Another instance on the same PostgreSQL database: the delivery row's posts go through it while the long-polls park on --url (cross-instance delivery).")
    var writerURL: ServerEndpoint?

    @Option(help: "Conversations those long-polls watch.")
    var longPollConversations: Int = 1_000

    @Option(help: "Idle keep-alive connections of the last row (the server's --max-connections must allow them).")
    var idle: Int = 10_000

    @Option(help: "Rounds of the four page rows, run interleaved so their ratios compare like with like.")
    var pageRounds: Int = 5

    @Option(help: "Unreported deep and short page load before the page rows, so they measure a warm server.")
    var warmup: DurationArgument = DurationArgument(.seconds(5))

    @Option(help: "Inbox rows: conversations of the heavy user (the light one has 10).")
    var inboxConversations: Int = 10_000

    @Option(help: "Inbox rows: members of the crowded conversation (against one with 2).")
    var crowdMembers: Int = 1_000

    @Option(help: "Inbox rows: users parked on their inbox feeds (the server's --max-connections must allow them).")
    var inboxPollers: Int = 10_000

    @Option(help: "The server's process id, for its RSS in the inbox feed row (default: the process listening on --url's port).")
    var serverPID: Int32?

    @Flag(help: "Leave out the inbox rows (their set-up makes about 50,000 requests the first time).")
    var noInbox = false

    @Flag(help: "Only the inbox rows (they need no seeded `load-` conversations).")
    var inboxOnly = false

    @Flag(help: "Only the bytes rows: a newest page identity, gzip and revalidated (304), and the revalidate scenario.")
    var bytesOnly = false

    @Flag(help: "Only the jump rows: a jump by time (around_time) against the around page of the same message, deep in the largest conversation.")
    var jumpOnly = false

    @Flag(help: "Requests without Accept-Encoding: gzip (the bytes rows still compare both).")
    var noGzip = false

    @Flag(help: "The revalidate rows re-read pages without If-None-Match.")
    var noEtag = false

    @Option(help: "Also write every row's full report as JSON to this file.")
    var json: String?

    @Flag(help: "No progress on stderr.")
    var quiet = false

    @OptionGroup(title: "Tokens mode (adds a deep-pages row per key type; the other rows send admin tokens)")
    var tokens: TokenModeOptions

    func validate() throws {
        guard clients >= 1, posters >= 1, longPolls >= 1, longPollConversations >= 1, idle >= 0, pageRounds >= 1,
              inboxConversations >= 10, crowdMembers >= 2, inboxPollers >= 1 else {
            throw ValidationError("Counts must be positive.")
        }
        guard !(noInbox && inboxOnly) else { throw ValidationError("--no-inbox and --inbox-only exclude each other.") }
        guard [bytesOnly, inboxOnly, jumpOnly].filter({ $0 }).count <= 1 else {
            throw ValidationError("--bytes-only, --inbox-only and --jump-only exclude each other.")
        }
    }

    func run() throws {
        var settings = BenchSuite.Settings(endpoint: url, duration: duration.duration, clients: clients, posters: posters,
                                           longPolls: longPolls, longPollConversations: longPollConversations,
                                           idleConnections: idle, pageRounds: pageRounds, warmup: warmup.duration, progress: !quiet)
        settings.inbox = !noInbox
        settings.inboxOnly = inboxOnly
        settings.bytesOnly = bytesOnly
        settings.jumpOnly = jumpOnly
        settings.acceptsGzip = !noGzip
        settings.sendsETags = !noEtag
        settings.inboxLarge = inboxConversations
        settings.crowdMembers = crowdMembers
        settings.inboxPollers = inboxPollers
        settings.serverPID = serverPID
        settings.writerEndpoint = writerURL
        settings.hs256 = try tokens.keys.hs256Signer().map { LoadCredentials(signer: $0, members: tokens.members) }
        settings.es256 = try tokens.keys.es256Signer().map { LoadCredentials(signer: $0, members: tokens.members) }
        let suite = BenchSuite(settings: settings)
        let rows = try suite.run { if !quiet { ProgressPrinter.stderr($0 + "\n") } }
        print(BenchSuite.markdown(rows))
        if let json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            encoder.keyEncodingStrategy = .convertToSnakeCase
            try encoder.encode(rows.map(\.report)).write(to: URL(fileURLWithPath: json))
        }
        if rows.contains(where: { !$0.report.passed }) { throw ExitCode(1) }
    }
}
