import ArgumentParser
import Foundation
import HistoryStore
import HistorySQLite
import ToolSupport

/// The store's benchmark: flat page cost and group commit, on a real file
/// (docs/performance.md, "The store alone").
///
/// Page figures come from one thread reading (the most stable figure on a
/// shared machine), with the three kinds interleaved page by page so that
/// noisy neighbours (builds on the same two cores) hurt them alike.
struct PageAndAppendBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Load a big and many short conversations, then measure pages/s and appends/s."
    )

    @Option(help: "Messages in the big conversation.")
    var messages: Int = 1_000_000

    @Option(help: "How many short conversations.")
    var shortConversations: Int = 1_000

    @Option(help: "Messages in each short conversation.")
    var shortMessages: Int = 1_000

    @Option(help: "Messages per page (the limit).")
    var limit: Int = 50

    @Option(help: "Pages timed per kind (after 2,000 untimed warm-up pages each).")
    var pages: Int = 30_000

    @Option(help: "Seconds of each append slice.")
    var appendSeconds: Double = 0.5

    @Option(help: "Append rounds; each round runs one slice per appender count.")
    var appendRounds: Int = 8

    @Option(help: "Concurrent appender counts to measure.")
    var appenders: [Int] = [1, 8, 64]

    @Option(help: "Folder for the database (default: a new temporary folder, removed afterwards).")
    var directory: String?

    @Flag(help: "Readers open with SQLite's default VFS, without prefetching pages (to measure what it gains).")
    var noPrefetch = false

    @Flag(help: "Keep the database afterwards.")
    var keep = false

    func validate() throws {
        guard PageQuery.limitRange.contains(limit) else { throw ValidationError("--limit must be 1...200") }
        guard messages >= limit * 10 else { throw ValidationError("--messages must be at least 10 x --limit") }
        guard shortConversations >= 1, shortMessages >= limit else {
            throw ValidationError("need at least one short conversation of at least --limit messages")
        }
        guard pages >= 1, appendSeconds > 0, appendRounds >= 1 else {
            throw ValidationError("--pages, --append-seconds and --append-rounds must be positive")
        }
        guard !appenders.isEmpty, appenders.allSatisfy({ $0 >= 1 }) else {
            throw ValidationError("--appenders must be positive counts")
        }
    }

    func run() async throws {
        let folder = URL(fileURLWithPath: directory ?? NSTemporaryDirectory())
            .appendingPathComponent("history-store-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { if !keep { try? FileManager.default.removeItem(at: folder) } }
        let path = folder.appendingPathComponent("bench.sqlite").path

        let batches = Locked((count: 0, items: 0))
        let store = try SQLiteHistoryStore(configuration: SQLiteStoreConfiguration(
            path: path, durability: .full, prefetchesPages: !noPrefetch,
            onBatchCommitted: { size in batches.withLock { $0.count += 1; $0.items += size } }))
        defer { store.close() }

        print("history-store-bench: \(grouped(Double(messages))) messages in one conversation + "
            + "\(grouped(Double(shortConversations))) x \(grouped(Double(shortMessages))), limit \(limit), durability full, "
            + "pages \(noPrefetch ? "not prefetched" : "prefetched")")
        print("database: \(path)")

        // MARK: Load
        let big = ConversationID("big")!
        _ = try store.createAndWait(big).get()
        var bigIDs: ClosedRange<Int64>?
        let bigSeconds = try seconds {
            bigIDs = try load(store, into: big, count: messages)
        }
        print("load: big conversation in \(twoDecimals(bigSeconds)) s (\(grouped(Double(messages) / bigSeconds)) messages/s)")
        var shorts: [ConversationID] = []
        let shortSeconds = try seconds {
            for index in 0..<shortConversations {
                let id = ConversationID("short-\(index)")!
                _ = try store.createAndWait(id).get()
                _ = try load(store, into: id, count: shortMessages)
                shorts.append(id)
            }
        }
        let shortTotal = Double(shortConversations * shortMessages)
        print("load: short conversations in \(twoDecimals(shortSeconds)) s (\(grouped(shortTotal / shortSeconds)) messages/s)")
        guard let bigIDs else { throw ValidationError("the big conversation is empty") }
        let fileBytes = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        print("file: \(grouped(Double(fileBytes) / 1_048_576)) MiB")

        // MARK: Pages
        var random = SplitMix64(seed: 2026)
        // "Deep": anywhere in the older 90% of the big conversation.
        let deepRange = (bigIDs.lowerBound + Int64(limit))...(bigIDs.lowerBound + Int64(Double(messages) * 0.9))
        let kinds: [(label: String, query: (inout SplitMix64) -> (ConversationID, PageQuery))] = [
            ("(a) newest page, big conversation", { _ in (big, PageQuery(limit: limit)) }),
            ("(b) random before page deep in it", { random in
                (big, PageQuery(cursor: .before(Int64.random(in: deepRange, using: &random)), limit: limit))
            }),
            ("(c) newest page, random short one", { random in
                (shorts[Int.random(in: 0..<shorts.count, using: &random)], PageQuery(limit: limit))
            }),
            // Controls: the same queries on rows read a moment ago. Against
            // (a) they show what depth and a conversation switch cost by
            // themselves; against (b) and (c), what rows not in the CPU's
            // caches cost.
            ("(b0) one deep page, repeated", { _ in
                (big, PageQuery(cursor: .before(deepRange.lowerBound + (deepRange.upperBound - deepRange.lowerBound) / 2),
                                limit: limit))
            }),
            ("(c0) one short one, repeated", { _ in (shorts[shorts.count / 2], PageQuery(limit: limit)) }),
        ]
        // One thread, the kinds interleaved page by page (rotating which
        // goes first), each page timed on its own: a neighbour's burst on
        // the shared cores then lands on all kinds alike instead of on
        // whichever kind's loop it overlapped. The slowest 5% of each kind
        // (preempted pages) are dropped before averaging.
        let warmUp = min(2_000, pages)
        var latencies = Array(repeating: [Double](), count: kinds.count)
        for index in kinds.indices { latencies[index].reserveCapacity(pages) }
        for iteration in 0..<(warmUp + pages) {
            for offset in kinds.indices {
                let index = (iteration + offset) % kinds.count
                let (conversation, query) = kinds[index].query(&random)
                let start = ContinuousClock.now
                let page = try store.page(of: conversation, query)
                let elapsed = ContinuousClock.now - start
                guard page.rows.count == limit else {
                    throw ValidationError("\(kinds[index].label): got \(page.rows.count) messages, expected \(limit)")
                }
                if iteration >= warmUp { latencies[index].append(Self.durationSeconds(elapsed)) }
            }
        }
        let costs = latencies.map { samples -> (mean: Double, median: Double) in
            let sorted = samples.sorted()
            let kept = sorted.prefix(max(1, sorted.count * 95 / 100))
            return (kept.reduce(0, +) / Double(kept.count), sorted[sorted.count / 2])
        }
        print("pages/s (one thread, kinds interleaved, \(grouped(Double(pages))) pages each, slowest 5% dropped; cost relative to (a)):")
        for (index, kind) in kinds.enumerated() {
            print("  \(padded(kind.label, 36, left: true)) \(padded(grouped(1 / costs[index].mean), 9))/s   "
                + "\(twoDecimals(costs[index].mean / costs[0].mean))x   (median page \(twoDecimals(costs[index].median * 1e6)) µs, "
                + "\(twoDecimals(costs[index].median / costs[0].median))x)")
        }
        let worstRatio = max(costs[1].mean, costs[2].mean) / costs[0].mean
        print("  goal (b), (c) <= 1.15x (a): \(worstRatio <= 1.15 ? "met" : "MISSED") (worst \(twoDecimals(worstRatio))x)")
        let layoutRatio = max(costs[3].mean, costs[4].mean) / costs[0].mean
        let cacheRatio = max(costs[1].mean / costs[3].mean, costs[2].mean / costs[4].mean)
        print("  of which depth and layout (b0), (c0): \(twoDecimals(layoutRatio))x; "
            + "rows not in the CPU caches (b)/(b0), (c)/(c0): \(twoDecimals(cacheRatio))x")

        // MARK: Appends
        // Short slices, alternating the appender counts round by round, so
        // the fsync latency of a shared disk (which swings 10x within
        // seconds when neighbours write) is about the same for the slices
        // a ratio compares.
        print("appends/s at durability full (\(appendRounds) rounds of \(twoDecimals(appendSeconds)) s per count; "
            + "best and median):")
        var rates: [Int: [Double]] = [:]
        var commits: [Int: (count: Int, items: Int)] = [:]
        for count in appenders {
            _ = try store.createAndWait(ConversationID("appends-\(count)")!).get()
        }
        for _ in 0..<appendRounds {
            for count in appenders {
                batches.withLock { $0 = (0, 0) }
                let rate = try await appendRate(store, to: ConversationID("appends-\(count)")!, appenders: count)
                // The last batch's callback may trail its answers by a moment.
                try await Task.sleep(for: .milliseconds(20))
                let batch = batches.value
                rates[count, default: []].append(rate)
                commits[count, default: (0, 0)].count += batch.count
                commits[count, default: (0, 0)].items += batch.items
            }
        }
        for count in appenders {
            let samples = rates[count]!.sorted()
            let total = commits[count]!
            let meanBatch = total.count == 0 ? 0 : Double(total.items) / Double(total.count)
            print("  \(padded(String(count), 3)) appender\(count == 1 ? " " : "s") \(padded(grouped(samples.last!), 9))/s"
                + "   (median \(grouped(samples[samples.count / 2]))/s; mean batch \(twoDecimals(meanBatch)))")
        }
        let most = appenders.max()!
        if let one = rates[1], let many = rates[most], most > 1 {
            // Each round's ratio compares slices run back to back.
            let ratios = zip(many, one).map { $0 / $1 }.sorted()
            let median = ratios[ratios.count / 2]
            let ofBest = many.max()! / one.max()!
            print("  \(most):1 ratio: median of rounds \(twoDecimals(median))x, of best rates \(twoDecimals(ofBest))x "
                + "(goal >= 20x: \(median >= 20 ? "met" : "MISSED"))")
        }
    }

    /// Appends from `appenders` concurrent tasks for `appendSeconds`;
    /// returns appends per second. Appenders are tasks awaiting the async
    /// append, as a server's handlers would be: 64 OS threads on 2 cores
    /// would measure the scheduler instead of the store.
    private func appendRate(_ store: SQLiteHistoryStore, to conversation: ConversationID, appenders: Int) async throws -> Double {
        // Messages are made before the clock starts: the figure is the
        // store's, not string building's.
        let bodies = (0..<64).map { Self.body($0) }
        let messagesByAppender = (0..<appenders).map { appender in
            bodies.map { NewMessage(sender: "appender-\(appender)", body: $0) }
        }
        let start = ContinuousClock.now
        let deadline = start + .milliseconds(Int(appendSeconds * 1000))
        let (appended, failed) = await withTaskGroup(of: (Int, Int).self) { group in
            for messages in messagesByAppender {
                group.addTask {
                    var appended = 0
                    var failed = 0
                    while ContinuousClock.now < deadline {
                        let message = messages[appended % messages.count]
                        do {
                            _ = try await store.append(message, to: conversation)
                            appended += 1
                        } catch {
                            failed += 1
                        }
                    }
                    return (appended, failed)
                }
            }
            return await group.reduce(into: (0, 0)) { $0.0 += $1.0; $0.1 += $1.1 }
        }
        guard failed == 0 else { throw ValidationError("\(failed) appends failed") }
        return Double(appended) / Self.durationSeconds(ContinuousClock.now - start)
    }

    static func durationSeconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// Bulk-loads `count` messages in transactions of at most 50,000.
    private func load(_ store: SQLiteHistoryStore, into conversation: ConversationID, count: Int) throws -> ClosedRange<Int64>? {
        var first: Int64?
        var last: Int64?
        var loaded = 0
        while loaded < count {
            let chunk = min(50_000, count - loaded)
            let batch = (0..<chunk).map { offset in
                NewMessage(sender: "user-\((loaded + offset) % 97)", body: Self.body(loaded + offset))
            }
            if let ids = try store.bulkAppend(batch, to: conversation) {
                first = first ?? ids.lowerBound
                last = ids.upperBound
            }
            loaded += chunk
        }
        guard let first, let last else { return nil }
        return first...last
    }

    /// A chat-like body of 40 to 120 bytes.
    static func body(_ index: Int) -> String {
        let words = ["hey", "did you see", "the deploy", "is green", "again", "lunch?", "ok", "let's ship it",
                     "tomorrow", "the review", "looks good", "one more thing", "thanks!", "on my way"]
        var text = "#\(index)"
        var word = UInt(index)
        while text.utf8.count < 40 + index % 80 {
            text += " " + words[Int(word % UInt(words.count))]
            word = word &* 31 &+ 7
        }
        return text
    }
}
