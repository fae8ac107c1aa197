import HTTPCore
import Synchronization

/// `run --scenario feed`: `--clients` backends follow `GET /v1/events`
/// (``ServerFeedReader``) while `--writers` (default 64) post as fast as
/// they are answered (closed loop; `--rate` paces them instead), then the
/// run proves the feed kept up and was exact: each reader catches up from
/// where it stopped (the backlog it was behind at the end, and how long
/// that took), and every acknowledged post is in each reader's feed
/// exactly once (an idempotent retry included: it must add nothing).
///
/// The readers start at the server's current activity, found by paging
/// through the whole feed from 0 first: a backend far behind's catch-up
/// rate, reported too.
enum ServerFeedRun {
    static let defaultWriters = 64
    /// A catch-up stops after this many answers or seconds: bounded, and far
    /// beyond any dataset the suite seeds.
    static let catchUpLimits = (answers: 100_000, seconds: 300.0)

    /// Paging through the feed without waiting, from a cursor to its end.
    struct CatchUp {
        var events = 0
        var seconds = 0.0
        var cursor: Int64 = 0
    }

    struct Outcome {
        let report: LoadReport
        let readers: Int
        let writers: Int
        let start: CatchUp
        let ends: [CatchUp]
        let acked: Int
        let missing: [String]
        let repeated: Int

        var passed: Bool { report.passed && missing.isEmpty && repeated == 0 }

        var text: String {
            let delivery = report.kinds.first { $0.kind == RequestKind.delivery.name }
            let postsPerSecond = Double(acked) / max(report.durationSeconds, 0.001)
            let behind = ends.map(\.events).max() ?? 0
            let slowest = ends.map(\.seconds).max() ?? 0
            var lines = [
                "== \(readers) reader\(readers == 1 ? "" : "s") of GET /v1/events beside \(writers) writers ==", report.text, "",
                "feed: start: paged from activity 0 through \(Format.grouped(start.events)) events in \(Format.fixed(start.seconds, 2)) s "
                    + "(\(Format.fixed(Double(start.events) / max(start.seconds, 0.001), 0)) events/s)",
                "feed: \(Format.grouped(acked)) posts acked (\(Format.fixed(postsPerSecond, 0))/s), each in every reader's feed exactly once: "
                    + (missing.isEmpty && repeated == 0 ? "yes" : "NO (\(missing.count) missing, \(repeated) repeated)"),
                "feed: delivered p50 \(Format.fixed(delivery?.p50Ms ?? 0, 2)) ms, p99 \(Format.fixed(delivery?.p99Ms ?? 0, 2)) ms "
                    + "from each post's send; behind at the end by at most \(Format.grouped(behind)) events "
                    + "(caught up in \(Format.fixed(slowest * 1000, 1)) ms)",
            ]
            for id in missing.prefix(InvariantLog.examplesKept) { lines.append("  missing from the feed: post client_id \(id)") }
            lines.append(passed ? "result: PASS" : "result: FAIL")
            return lines.joined(separator: "\n")
        }
    }

    static func execute(_ plan: LoadPlan) throws -> Outcome {
        var plan = plan
        // The feed is the administrators': in tokens mode every user of the run is one.
        plan.settings.credentials?.usersAreAdmins = true
        let authorization = plan.settings.credentials?.adminAuthorization()
        let start = try catchUp(from: 0, plan.endpoint, authorization: authorization) { _ in }
        let ledger = ServerFeedLedger(start: start.cursor, readers: plan.clients)
        let writers = plan.writers ?? defaultWriters
        let perWriter = plan.rate.map { $0 / Double(writers) }
        plan.roles = (0..<plan.clients).map { _ in
            LoadRun.Role(scenario: .feed, paced: false, make: { index in ServerFeedReader(ledger: ledger, reader: index) })
        } + Array(repeating: LoadRun.Role(scenario: .post, paced: perWriter != nil, rate: perWriter), count: writers)
        plan.warmupReaders = plan.clients
        let ackTimes = PostAckTimes()
        plan.settings.postAckTimes = ackTimes
        let report = try LoadRun.execute(plan)
        let acked = ackTimes.all()
        var ends: [CatchUp] = []
        for reader in 0..<plan.clients {
            ends.append(try catchUp(from: ledger.cursor(of: reader), plan.endpoint, authorization: authorization) { clientIDs in
                ledger.saw(clientIDs, reader: reader, cursor: nil, log: nil)
            })
        }
        let missing = ledger.missing(acked.keys.sorted())
        return Outcome(report: report, readers: plan.clients, writers: writers, start: start, ends: ends, acked: acked.count,
                       missing: missing, repeated: ledger.repeated)
    }

    /// Pages through the feed from `since` without waiting until `has_more`
    /// is false; `page` gets the `client_id`s of our posts in each answer.
    static func catchUp(from since: Int64, _ endpoint: ServerEndpoint, authorization: String?,
                        page: ([String]) -> Void) throws -> CatchUp {
        let connection = LoadConnection(endpoint: endpoint, shard: LoadStats(shardCount: 1).shard(for: 0),
                                        authorization: authorization, acceptsGzip: true)
        defer { connection.reset() }
        var summary = EventsSummary()
        var result = CatchUp(cursor: since)
        let began = MonotonicClock.now()
        for _ in 0..<catchUpLimits.answers {
            let target = "/v1/events?since=\(result.cursor)&limit=1000"
            guard let response = connection.perform(.get, target, kind: .readBack), response.status == 200 else {
                throw LoadError("GET \(target) failed: the backend feed needs open mode or an admin token")
            }
            do {
                try summary.scan(response.body, feed: .server)
            } catch {
                throw LoadError("GET \(target): \(error)")
            }
            result.events += summary.events.count
            page(summary.events.compactMap { event in
                event.type == .created ? event.clientID.flatMap { PostUser.dueTime(fromClientID: $0) != nil ? $0 : nil } : nil
            })
            result.cursor = summary.version
            result.seconds = Double(MonotonicClock.now() - began) / 1e9
            if !summary.hasMore || result.seconds > catchUpLimits.seconds { break }
        }
        return result
    }
}

/// What the ``ServerFeedReader``s saw: per reader, how often each post of
/// ours came (exactly once is right) and the cursor it stopped at.
final class ServerFeedLedger: Sendable {
    let start: Int64
    private let state: Mutex<State>

    private struct State {
        var seen: [[String: Int]]
        var cursors: [Int64]
        var repeated = 0
    }

    init(start: Int64, readers: Int) {
        self.start = start
        state = Mutex(State(seen: Array(repeating: [:], count: readers), cursors: Array(repeating: start, count: readers)))
    }

    /// Records the posts of one answer; a post seen before by this reader is
    /// a repeat (logged as `events_ordered` when a log is given).
    func saw(_ clientIDs: [String], reader: Int, cursor: Int64?, log: InvariantLog?) {
        let repeats: [String] = state.withLock { state in
            var repeats: [String] = []
            for id in clientIDs {
                state.seen[reader][id, default: 0] += 1
                if state.seen[reader][id]! == 2 {
                    state.repeated += 1
                    repeats.append(id)
                }
            }
            if let cursor { state.cursors[reader] = cursor }
            return repeats
        }
        for id in repeats { log?.violation(.eventsOrdered, "feed reader \(reader): post \(id) delivered twice") }
    }

    func cursor(of reader: Int) -> Int64 { state.withLock { $0.cursors[reader] } }

    var repeated: Int { state.withLock { $0.repeated } }

    /// The acknowledged posts some reader never saw.
    func missing(_ acked: [String]) -> [String] {
        state.withLock { state in acked.filter { id in state.seen.contains { $0[id] == nil } } }
    }
}
