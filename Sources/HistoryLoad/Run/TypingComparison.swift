import Foundation

/// `run --scenario typing`: what typers cost the readers. The same readers
/// (`deep` pages, closed loop, `--clients` of them) run alone and beside
/// `--writers` typers (default 1,000) who each send `PUT .../typing` every
/// 2 s to one of the live conversations, alternated in `rounds` rounds of
/// both (each segment `--duration` / (2 x rounds)), so a machine's drift
/// falls on both alike. The page rates of the two sides, each over all its
/// segments, are the measure (issue 24 asks for pages no more than 5%
/// slower at 1,000 typers).
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
    static let rounds = 2

    struct Outcome {
        /// The last segment of each side (printed whole; the JSON report is `withTypers`).
        let alone: LoadReport
        let withTypers: LoadReport
        /// Pages per second of each segment, in order.
        let aloneRates: [Double]
        let withTypersRates: [Double]
        /// The server's CPU seconds over each side's pages (nil: not on this machine).
        let aloneCPUPerPage: Double?
        let withTypersCPUPerPage: Double?
        /// The database's CPU seconds over each side's pages (nil: no `--database-pid`).
        var aloneDatabaseCPUPerPage: Double? = nil
        var withTypersDatabaseCPUPerPage: Double? = nil
        let typers: Int
        let passed: Bool

        var text: String {
            let before = aloneRates.reduce(0, +) / Double(max(1, aloneRates.count))
            let after = withTypersRates.reduce(0, +) / Double(max(1, withTypersRates.count))
            let change = before > 0 ? (after - before) / before * 100 : 0
            let typing = withTypers.kinds.first { $0.kind == RequestKind.typing.name }
            let perRound = zip(aloneRates, withTypersRates).map { "\(Format.fixed($0, 0))/\(Format.fixed($1, 0))" }.joined(separator: ", ")
            return [
                "== readers alone (last of \(aloneRates.count) segments) ==", alone.text, "",
                "== readers beside \(typers) typers (last of \(withTypersRates.count) segments) ==", withTypers.text, "",
                "typing: pages \(Format.fixed(before, 0))/s alone, \(Format.fixed(after, 0))/s beside \(typers) typers "
                    + "(\(change >= 0 ? "+" : "")\(Format.fixed(change, 1))%; alone/beside per round: \(perRound)); typing calls "
                    + "\(Format.fixed(typing?.perSecond ?? 0, 0))/s, p99 \(Format.fixed(typing?.p99Ms ?? 0, 2)) ms",
            ].joined(separator: "\n") + cpuText("server", aloneCPUPerPage, withTypersCPUPerPage)
                + cpuText("database", aloneDatabaseCPUPerPage, withTypersDatabaseCPUPerPage)
        }

        private func cpuText(_ what: String, _ alone: Double?, _ beside: Double?) -> String {
            guard let alone, let beside, alone > 0 else { return "" }
            let change = (beside - alone) / alone * 100
            return "\ntyping: \(what) CPU per page \(Format.fixed(alone * 1e6, 1)) µs alone, \(Format.fixed(beside * 1e6, 1)) µs beside "
                + "\(typers) typers, their calls charged to the pages (\(change >= 0 ? "+" : "")\(Format.fixed(change, 1))%)"
        }
    }

    static func execute(_ plan: LoadPlan, databasePID: Int32? = nil) throws -> Outcome {
        guard plan.settings.credentials != nil else {
            throw LoadError("typing needs tokens mode (--jwt-secret-file or --jwt-es256-key, and `seed --add-members`): open mode has no user to show typing")
        }
        let typers = plan.writers ?? defaultTypers
        let readers = Array(repeating: LoadRun.Role(scenario: .deep, paced: false), count: plan.clients)
        let typing = Array(repeating: LoadRun.Role(scenario: .typing, paced: true, rate: callsPerTyperPerSecond,
                                                   make: { _ in TypingUser() }), count: typers)
        var segment = plan
        segment.duration = plan.duration / (2 * rounds)
        let server = ServerMemory.pid(listeningOn: plan.endpoint.port)
        var alone: [LoadReport] = [], beside: [LoadReport] = []
        var aloneCPU: Double? = 0, besideCPU: Double? = 0
        var aloneDatabaseCPU: Double? = databasePID == nil ? nil : 0, besideDatabaseCPU = aloneDatabaseCPU
        /// One segment, and the server's and the database's CPU seconds it took.
        func measured(_ roles: [LoadRun.Role], _ scenario: Scenario) throws -> (LoadReport, Double?, Double?) {
            segment.scenario = scenario
            segment.roles = roles
            let before = server.flatMap(ServerCPU.seconds)
            let databaseBefore = databasePID.flatMap { ServerCPU.databaseSeconds(postmaster: $0) }
            let report = try LoadRun.execute(segment)
            let after = server.flatMap(ServerCPU.seconds)
            let databaseAfter = databasePID.flatMap { ServerCPU.databaseSeconds(postmaster: $0) }
            return (report, before.flatMap { start in after.map { $0 - start } },
                    databaseBefore.flatMap { start in databaseAfter.map { $0 - start } })
        }
        func add(_ sum: inout Double?, _ value: Double?) { sum = sum.flatMap { sum in value.map { sum + $0 } } }
        for _ in 0..<rounds {
            let (readersAlone, cpuAlone, databaseAlone) = try measured(readers, .deep)
            alone.append(readersAlone)
            add(&aloneCPU, cpuAlone)
            add(&aloneDatabaseCPU, databaseAlone)
            let (readersBeside, cpuBeside, databaseBeside) = try measured(readers + typing, .typing)
            beside.append(readersBeside)
            add(&besideCPU, cpuBeside)
            add(&besideDatabaseCPU, databaseBeside)
        }
        let pagesAlone = alone.map(pageCount).reduce(0, +), pagesBeside = beside.map(pageCount).reduce(0, +)
        var outcome = Outcome(alone: alone.last!, withTypers: beside.last!, aloneRates: alone.map(pageRate),
                              withTypersRates: beside.map(pageRate),
                              aloneCPUPerPage: aloneCPU.map { $0 / max(pagesAlone, 1) },
                              withTypersCPUPerPage: besideCPU.map { $0 / max(pagesBeside, 1) }, typers: typers,
                              // A refused page (a 429 of the read rate limit) measures the refusal, not the page.
                              passed: (alone + beside).allSatisfy { $0.passed && $0.errorCount == 0 })
        outcome.aloneDatabaseCPUPerPage = aloneDatabaseCPU.map { $0 / max(pagesAlone, 1) }
        outcome.withTypersDatabaseCPUPerPage = besideDatabaseCPU.map { $0 / max(pagesBeside, 1) }
        return outcome
    }

    /// Pages answered over every page kind the readers asked for.
    static func pageCount(_ report: LoadReport) -> Double {
        report.kinds.filter { $0.kind.hasPrefix("page") }.reduce(0) { $0 + Double($1.count) }
    }

    /// Pages per second over every page kind the readers asked for.
    static func pageRate(_ report: LoadReport) -> Double {
        report.kinds.filter { $0.kind.hasPrefix("page") }.reduce(0) { $0 + $1.perSecond }
    }
}
