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
            ].joined(separator: "\n")
        }
    }

    static func execute(_ plan: LoadPlan) throws -> Outcome {
        guard plan.settings.credentials != nil else {
            throw LoadError("typing needs tokens mode (--jwt-secret-file or --jwt-es256-key, and `seed --add-members`): open mode has no user to show typing")
        }
        let typers = plan.writers ?? defaultTypers
        let readers = Array(repeating: LoadRun.Role(scenario: .deep, paced: false), count: plan.clients)
        let typing = Array(repeating: LoadRun.Role(scenario: .typing, paced: true, rate: callsPerTyperPerSecond,
                                                   make: { _ in TypingUser() }), count: typers)
        var segment = plan
        segment.duration = plan.duration / (2 * rounds)
        var alone: [LoadReport] = [], beside: [LoadReport] = []
        for _ in 0..<rounds {
            segment.scenario = .deep
            segment.roles = readers
            alone.append(try LoadRun.execute(segment))
            segment.scenario = .typing
            segment.roles = readers + typing
            beside.append(try LoadRun.execute(segment))
        }
        return Outcome(alone: alone.last!, withTypers: beside.last!, aloneRates: alone.map(pageRate),
                       withTypersRates: beside.map(pageRate), typers: typers,
                       passed: (alone + beside).allSatisfy(\.passed))
    }

    /// Pages per second over every page kind the readers asked for.
    static func pageRate(_ report: LoadReport) -> Double {
        report.kinds.filter { $0.kind.hasPrefix("page") }.reduce(0) { $0 + $1.perSecond }
    }
}
