import Foundation

/// `run --scenario typing`: what typers cost the readers. One run: the
/// readers (`deep` pages, closed loop, `--clients` of them) read all along,
/// and `--writers` typers (default 1,000), each sending `PUT .../typing`
/// every 2 s to one of the live conversations, type in every other segment
/// of it and stay connected in the others (``RunSegments``). The first
/// segment warms up (the typers connect, the server's caches fill) and is
/// not counted; after it come `pairs` pairs of a segment alone and one
/// beside the typers, so each pair compares two neighbouring stretches of
/// the same run. Issue 24 asks for pages no more than 5% slower at 1,000
/// typers; the measure is the page rate of all the segments beside against
/// all those alone, and each pair's change is printed too.
///
/// Tokens mode only: typing is shown under a user id, and open mode has
/// none (the server answers 403).
///
/// On one machine the load tool's typers take CPU from the server too, so
/// for a server on this machine (found by its port) the server's own CPU
/// per page is printed for each side as well, typing's CPU charged to the
/// pages: what typers cost a server whose clients are elsewhere. With
/// `--database-pid` (a PostgreSQL postmaster on this machine), the
/// database's CPU per page is printed too, its backends' included.
enum TypingComparison {
    /// A typer sends this often: once per the contract's 2 s.
    static let callsPerTyperPerSecond = 0.5
    static let defaultTypers = 1_000
    /// The longest segment: short enough for several pairs in a minute's
    /// run, long enough for a few hundred pages and tens of CPU ticks.
    static let longestSegment = Duration.seconds(5)
    /// The fewest pairs a run has, however short.
    static let fewestPairs = 2

    /// What each boundary counts: totals since the start.
    enum Count: Int, CaseIterable {
        case pages, typingCalls, serverCPU, databaseCPU, toolCPU
    }

    /// One segment's share of the totals, and its length.
    struct Segment {
        let seconds: Double
        let counts: [Double]

        subscript(_ count: Count) -> Double { counts[count.rawValue] }
        var pageRate: Double { self[.pages] / seconds }
    }

    struct Outcome {
        /// The whole run, warm-up included (its typing latencies are the typers').
        let report: LoadReport
        /// The measured segments of each side, in order (pair i is alone[i] then beside[i]).
        let alone: [Segment]
        let beside: [Segment]
        let typers: Int
        let passed: Bool

        var aloneRates: [Double] { alone.map(\.pageRate) }
        var withTypersRates: [Double] { beside.map(\.pageRate) }

        /// Pages per second over all the segments of a side.
        static func rate(_ side: [Segment]) -> Double {
            let seconds = side.reduce(0) { $0 + $1.seconds }
            return seconds > 0 ? side.reduce(0) { $0 + $1[.pages] } / seconds : 0
        }

        /// A side's `count` per page over all its segments; nil when not measured.
        static func perPage(_ side: [Segment], _ count: Count) -> Double? {
            let pages = side.reduce(0) { $0 + $1[.pages] }, used = side.reduce(0) { $0 + $1[count] }
            return used.isNaN || pages == 0 ? nil : used / pages
        }

        var aloneCPUPerPage: Double? { Self.perPage(alone, .serverCPU) }
        var withTypersCPUPerPage: Double? { Self.perPage(beside, .serverCPU) }
        var aloneDatabaseCPUPerPage: Double? { Self.perPage(alone, .databaseCPU) }
        var withTypersDatabaseCPUPerPage: Double? { Self.perPage(beside, .databaseCPU) }

        /// The change of the page rate beside the typers against alone, in per cent.
        var change: Double {
            let before = Self.rate(alone), after = Self.rate(beside)
            return before > 0 ? (after - before) / before * 100 : 0
        }

        var pairChanges: [Double] {
            zip(alone, beside).map { $0.pageRate > 0 ? ($1.pageRate - $0.pageRate) / $0.pageRate * 100 : 0 }
        }

        var text: String {
            let typingRate = { (side: [Segment]) in
                side.reduce(0) { $0 + $1[.typingCalls] } / max(1e-9, side.reduce(0) { $0 + $1.seconds })
            }
            let typing = report.kinds.first { $0.kind == RequestKind.typing.name }
            let pairs = zip(alone, beside).map { "\(Format.fixed($0.pageRate, 0))/\(Format.fixed($1.pageRate, 0))" }
            let sorted = pairChanges.sorted()
            let median = sorted.isEmpty ? 0 : (sorted[(sorted.count - 1) / 2] + sorted[sorted.count / 2]) / 2
            return [
                "== the whole run: readers, and \(typers) typers in every other segment ==", report.text, "",
                "typing: pages \(Format.fixed(Self.rate(alone), 0))/s alone, \(Format.fixed(Self.rate(beside), 0))/s beside \(typers) typers "
                    + "(\(Self.signed(change))%; alone/beside per pair: \(pairs.joined(separator: ", ")); "
                    + "per pair \(pairChanges.map(Self.signed).joined(separator: ", "))%, median \(Self.signed(median))%)",
                "typing: calls \(Format.fixed(typingRate(beside), 0))/s beside, \(Format.fixed(typingRate(alone), 0))/s alone; "
                    + "p99 \(Format.fixed(typing?.p99Ms ?? 0, 2)) ms",
            ].joined(separator: "\n") + cpuText("server", aloneCPUPerPage, withTypersCPUPerPage)
                + cpuText("database", aloneDatabaseCPUPerPage, withTypersDatabaseCPUPerPage)
                + cpuText("load tool", Self.perPage(alone, .toolCPU), Self.perPage(beside, .toolCPU)) + shareText
        }

        /// Where the cores went on each side: each process's CPU a second.
        private var shareText: String {
            let perSecond = { (side: [Segment], count: Count) -> Double? in
                let seconds = side.reduce(0) { $0 + $1.seconds }, used = side.reduce(0) { $0 + $1[count] }
                return used.isNaN || seconds == 0 ? nil : used / seconds
            }
            let parts = [("server", Count.serverCPU), ("database", .databaseCPU), ("load tool", .toolCPU)].compactMap { name, count in
                perSecond(alone, count).flatMap { alone in perSecond(beside, count).map { beside in
                    "\(name) \(Format.fixed(alone, 2)) → \(Format.fixed(beside, 2))"
                } }
            }
            return parts.isEmpty ? "" : "\ntyping: CPU seconds a second, alone → beside: " + parts.joined(separator: ", ")
        }

        static func signed(_ value: Double) -> String { (value >= 0 ? "+" : "") + Format.fixed(value, 1) }

        private func cpuText(_ what: String, _ alone: Double?, _ beside: Double?) -> String {
            guard let alone, let beside, alone > 0 else { return "" }
            return "\ntyping: \(what) CPU per page \(Format.fixed(alone * 1e6, 1)) µs alone, \(Format.fixed(beside * 1e6, 1)) µs beside "
                + "\(typers) typers, their calls charged to the pages (\(Self.signed((beside - alone) / alone * 100))%)"
        }
    }

    /// The segments of a run of `duration`: the warm-up and `pairs` pairs.
    static func segments(for duration: Duration) -> (length: Duration, pairs: Int) {
        let length = min(longestSegment, duration / (1 + 2 * fewestPairs))
        let pairs = max(fewestPairs, Int((duration / length).rounded(.down) - 1) / 2)
        return (length, pairs)
    }

    static func execute(_ plan: LoadPlan, databasePID: Int32? = nil) throws -> Outcome {
        guard plan.settings.credentials != nil else {
            throw LoadError("typing needs tokens mode (--jwt-secret-file or --jwt-es256-key, and `seed --add-members`): open mode has no user to show typing")
        }
        let typers = plan.writers ?? defaultTypers
        let readers = Array(repeating: LoadRun.Role(scenario: .deep, paced: false), count: plan.clients)
        let typing = Array(repeating: LoadRun.Role(scenario: .typing, paced: true, rate: callsPerTyperPerSecond,
                                                   make: { _ in TypingUser() }), count: typers)
        let server = ServerMemory.pid(listeningOn: plan.endpoint.port)
        let (length, pairs) = segments(for: plan.duration)
        let segments = RunSegments(length: length, count: 1 + 2 * pairs) { stats in
            var counts = [Double](repeating: .nan, count: Count.allCases.count)
            counts[Count.pages.rawValue] = Double(stats.count { $0.name.hasPrefix("page") })
            counts[Count.typingCalls.rawValue] = Double(stats.count { $0 == .typing })
            counts[Count.serverCPU.rawValue] = server.flatMap(ServerCPU.seconds) ?? .nan
            counts[Count.databaseCPU.rawValue] = databasePID.flatMap { ServerCPU.databaseSeconds(postmaster: $0) } ?? .nan
            counts[Count.toolCPU.rawValue] = ServerCPU.seconds(pid: getpid()) ?? .nan
            return RunSegments.Sample(at: MonotonicClock.now(), counts: counts)
        }
        var run = plan
        run.scenario = .typing
        run.roles = readers + typing
        run.segments = segments
        run.duration = segments.duration
        let report = try LoadRun.execute(run)

        let samples = segments.taken
        let measured = zip(samples, samples.dropFirst()).map { start, end in
            Segment(seconds: Double(end.at - start.at) / 1e9, counts: zip(start.counts, end.counts).map { $1 - $0 })
        }.dropFirst()   // the warm-up
        let alone = measured.enumerated().filter { $0.offset % 2 == 0 }.map(\.element)
        let beside = measured.enumerated().filter { $0.offset % 2 == 1 }.map(\.element)
        return Outcome(report: report, alone: alone, beside: beside, typers: typers,
                       // A refused page (a 429 of the read rate limit) measures the refusal, not the page.
                       passed: report.passed && report.errorCount == 0 && alone.count == pairs && beside.count == pairs)
    }
}
