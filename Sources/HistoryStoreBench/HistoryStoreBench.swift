import ArgumentParser

/// `history-store-bench`: measures the store against its performance
/// goals (flat page cost, group commit; docs/performance.md, "The store
/// alone"), and hosts the child process the
/// crash test kills.
@main
struct HistoryStoreBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history-store-bench",
        abstract: "Measure the SQLite history store: page reads and group-committed appends.",
        discussion: """
            Run in release: swift run -c release history-store-bench --messages 1000000
            """,
        subcommands: [PageAndAppendBenchmark.self, PostgresAppendBenchmark.self, CrashChild.self],
        defaultSubcommand: PageAndAppendBenchmark.self
    )
}
