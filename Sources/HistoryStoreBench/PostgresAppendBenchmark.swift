import ArgumentParser
import Dispatch
import Foundation
import HistoryPostgres
import HistoryStore
import HistorySQLite
import ToolSupport

/// Group-committed appends through `PostgresWriter`, on a database the
/// caller gives (its durability is the server's: `fsync`,
/// `synchronous_commit`), from posters on plain threads, each to its own
/// conversation, as `history-load`'s post scenario does over HTTP.
///
/// With `--instances 2` the posters are split between two writers on two
/// pools: two server instances sharing the database.
struct PostgresAppendBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "postgres-appends",
        abstract: "Measure appends/s of the PostgreSQL writer against a database (migrated first).",
        discussion: """
            swift run -c release history-store-bench postgres-appends \\
                --database 'postgresql://postgres@/bench?host=/tmp/pg&port=5432' --posters 64
            """
    )

    @Option(help: "libpq URI of the database (made for the benchmark: it gets the schema and conversations).")
    var database: String

    @Option(help: "Concurrent posters, each to its own conversation.")
    var posters: Int = 64

    @Option(help: "Seconds of each round.")
    var duration: Double = 5

    @Option(help: "Rounds.")
    var rounds: Int = 3

    @Option(help: "Writers (instances), each with its own pool; posters are split between them.")
    var instances: Int = 1

    @Flag(help: "Posts without client_id (by default each carries one, as history-load's posts do).")
    var noClientID = false

    func validate() throws {
        guard posters >= 1, duration > 0, rounds >= 1, instances >= 1 else {
            throw ValidationError("--posters, --duration, --rounds and --instances must be positive")
        }
    }

    func run() throws {
        _ = try PostgresMigrator(migrations: PostgresSchema.migrations()).migrate(PGConnection(uri: database))
        let batches = Locked<[Int]>([])
        let pools = (0..<instances).map { _ in PostgresConnectionPool(uri: database, maximumConnections: 1) }
        let writers = pools.map { pool in
            PostgresWriter(pool: pool, maximumBatchSize: 512) { commit in batches.withLock { $0.append(commit.size) } }
        }
        defer {
            writers.forEach { $0.close() }
            pools.forEach { $0.close() }
        }
        let run = String(UInt64.random(in: 0...UInt64.max), radix: 36)
        let conversations = (0..<posters).map { ConversationID("bench-\(run)-\($0)")! }
        for conversation in conversations {
            _ = try wait { writers[0].submit(.createConversation(id: conversation, title: nil, owner: nil, completion: $0)) }.get()
        }
        print("posters \(posters), instances \(instances), client_id \(!noClientID)")
        for round in 1...rounds {
            batches.withLock { $0.removeAll() }
            let latencies = Locked<[Double]>([])
            let failures = Locked(0)
            let deadline = ContinuousClock.now + .milliseconds(Int(duration * 1000))
            let elapsed = seconds {
                onThreads(posters) { poster in
                    let writer = writers[poster % writers.count]
                    var mine: [Double] = []
                    var index = 0
                    while ContinuousClock.now < deadline {
                        let message = NewMessage(sender: "poster-\(poster)", body: "message \(index) of poster \(poster), a short line",
                                                 clientID: noClientID ? nil : "\(run)-\(poster)-\(index)")
                        var result: Result<AppendOutcome, StoreError>!
                        let took = seconds {
                            result = wait { writer.submit(.append(message, conversation: conversations[poster], completion: $0)) }
                        }
                        if case .failure = result { failures.withLock { $0 += 1 } } else { mine.append(took) }
                        index += 1
                    }
                    latencies.withLock { $0 += mine }
                }
            }
            let sorted = latencies.value.sorted()
            let sizes = batches.value
            let p99 = sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * 0.99))]
            print("round \(round): \(grouped(Double(sorted.count) / elapsed)) appends/s, p99 \(twoDecimals(p99 * 1000)) ms, "
                + "\(sizes.count) batches of \(twoDecimals(Double(sizes.reduce(0, +)) / Double(max(1, sizes.count)))) on average, "
                + "\(failures.value) failed")
        }
    }

    /// A write's answer, waited for on the calling thread.
    private func wait<T: Sendable>(_ start: (@escaping @Sendable (Result<T, StoreError>) -> Void) -> Void) -> Result<T, StoreError> {
        let done = DispatchSemaphore(value: 0)
        let box = Locked<Result<T, StoreError>?>(nil)
        start { result in
            box.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        return box.value!
    }
}
