import ArgumentParser

/// `history-load`: fills a history server with realistic conversations,
/// loads it with virtual chat screens while checking every answer, runs
/// the fixed benchmark suite behind docs/performance.md, and attacks a server
/// on this machine to show what the attacks cost its normal users (`abuse`).
@main
struct HistoryLoad: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history-load",
        abstract: "Seed, load-test and benchmark a chat history server, checking its answers while loading it.",
        discussion: """
            Conversations are named load-0000, load-0001, ... (the largest first); `run` and \
            `bench` find them by asking the server, so seed first.
            """,
        subcommands: [SeedCommand.self, RunCommand.self, BenchCommand.self, TokenCommand.self, AbuseCommand.self]
    )
}
