import Foundation

/// One phase of `abuse`: the normal users' figures beside one attack (or none).
struct AbusePhase: Codable, Sendable {
    var attack: Attack?
    var name: String
    var normalRequests: UInt64
    /// Over every request of the normal users (pages and posts).
    var normalP99Ms: Double
    /// Answers outside 2xx and transport failures of the normal users.
    var normalErrors: Int
    /// Wrong answers the normal users' checks caught, and acked posts not read back.
    var violations: Int
    var errors: [String: Int]
    /// The normal posters' posts, and those of their errors.
    var posts: UInt64
    var postErrors: Int
    var outcome: AttackOutcome?
    /// The highest `VmRSS` sampled through the phase; nil without the server's process.
    var peakRSSBytes: UInt64?

    init(attack: Attack?, name: String, report: LoadReport, outcome: AttackOutcome?, peakRSSBytes: UInt64?) {
        self.attack = attack
        self.name = name
        normalRequests = report.requests
        normalP99Ms = report.p99Ms
        normalErrors = report.errorCount
        violations = report.violationCount + report.ackedPostsMissing
        errors = report.errors
        posts = report.kinds.first { $0.kind == RequestKind.post.name }?.count ?? 0
        postErrors = report.errors.filter { $0.key.hasPrefix(RequestKind.post.name) }.values.reduce(0, +)
        self.outcome = outcome
        self.peakRSSBytes = peakRSSBytes
    }

    static func name(of attack: Attack?, _ plan: AbusePlan) -> String {
        guard let attack else { return "no attack" }
        switch attack {
        case .slowloris: return "slowloris: \(Format.grouped(plan.slowloris)) heads, 1 byte / \(Format.fixed(plan.drip.secondsDouble, 1)) s"
        case .idle: return "idle: \(Format.grouped(plan.idle)) sockets, one client"
        case .nonReaders: return "non-readers: \(Format.grouped(plan.nonReaders)) x limit=\(plan.nonReaderLimit) pages"
        case .longPolls: return "long-polls: \(Format.grouped(plan.longPolls)) filtered out of range"
        case .flood: return "flood: one client posting"
        case .badTokens: return "bad tokens: one client, \(Format.grouped(plan.badTokenSockets)) sockets of forged-token reads"
        }
    }

    var peakRSSMegabytes: Double? { peakRSSBytes.map { Double($0) / 1_048_576 } }
}

/// The result of `abuse`: a row per phase and a verdict per goal, printed
/// for people and written as JSON for machines (`--json FILE`).
struct AbuseReport: Codable, Sendable, JSONFileReport {
    struct Goal: Codable, Sendable {
        var goal: String
        /// PASS, FAIL, or SKIP when the phase it needs did not run (or the server's memory could not be read).
        var verdict: String
        var detail: String
    }

    static let rssLimitMegabytes = 500.0
    static let p99Factor = 2.0

    var url: String
    var serverPID: Int32?
    var phaseSeconds: Double
    var population: Int
    var posters: Int
    var postsPerSecond: Double
    var bigConversation: String?
    var phases: [AbusePhase]
    var goals: [Goal]

    var passed: Bool { !goals.contains { $0.verdict == "FAIL" } }

    init(plan: AbusePlan, serverPID: Int32?, bigConversation: String?, phases: [AbusePhase]) {
        url = plan.endpoint.description
        self.serverPID = serverPID
        phaseSeconds = plan.attackDuration.secondsDouble
        population = plan.population
        posters = plan.posters
        postsPerSecond = plan.postRate
        self.bigConversation = bigConversation
        self.phases = phases
        goals = Self.goals(phases)
    }

    static func goals(_ phases: [AbusePhase]) -> [Goal] {
        let baseline = phases.first { $0.attack == nil }
        let attacked = phases.filter { $0.attack != nil }
        var goals: [Goal] = []

        let erring = attacked.filter { $0.normalErrors + $0.violations > 0 }
        goals.append(Goal(goal: "the normal users see no errors", verdict: attacked.isEmpty ? "SKIP" : erring.isEmpty ? "PASS" : "FAIL",
                          detail: erring.map { "\($0.attack!.rawValue): \($0.normalErrors) errors"
                              + ($0.violations > 0 ? ", \($0.violations) violations" : "") }.joined(separator: "; ")))

        if let baseline, baseline.normalRequests > 0, !attacked.isEmpty {
            let limit = baseline.normalP99Ms * p99Factor
            let slow = attacked.filter { $0.normalRequests == 0 || $0.normalP99Ms > limit }
            goals.append(Goal(goal: "their p99 within \(Format.fixed(p99Factor, 0))x the no-attack run (\(Format.fixed(baseline.normalP99Ms, 2)) ms)",
                              verdict: slow.isEmpty ? "PASS" : "FAIL",
                              detail: slow.map { phase in
                                  phase.normalRequests == 0 ? "\(phase.attack!.rawValue): no request answered"
                                      : "\(phase.attack!.rawValue): \(Format.fixed(phase.normalP99Ms, 2)) ms "
                                      + "(\(Format.fixed(phase.normalP99Ms / max(baseline.normalP99Ms, 0.001), 1))x)"
                              }.joined(separator: "; ")))
        } else {
            goals.append(Goal(goal: "their p99 within \(Format.fixed(p99Factor, 0))x the no-attack run", verdict: "SKIP",
                              detail: "no baseline answered"))
        }

        let measured = phases.filter { $0.peakRSSMegabytes != nil }
        let heavy = measured.filter { $0.peakRSSMegabytes! >= rssLimitMegabytes }
        goals.append(Goal(goal: "the server's RSS under \(Format.fixed(rssLimitMegabytes, 0)) MB",
                          verdict: measured.isEmpty ? "SKIP" : heavy.isEmpty ? "PASS" : "FAIL",
                          detail: measured.isEmpty ? "the server's process was not found: give --server-pid"
                              : heavy.map { "\($0.attack?.rawValue ?? "no attack"): \(Format.fixed($0.peakRSSMegabytes!, 0)) MB" }
                                .joined(separator: "; ")))

        if let flood = phases.first(where: { $0.attack == .flood }) {
            let refused = flood.outcome?.statuses[429] ?? 0
            let sent = flood.outcome?.answers ?? 0
            let ok = refused > 0 && flood.postErrors == 0 && flood.posts > 0
            goals.append(Goal(goal: "the flood is answered 429 while the others post normally", verdict: ok ? "PASS" : "FAIL",
                              detail: "\(Format.grouped(refused)) of \(Format.grouped(sent)) flood posts answered 429; "
                                  + "normal posters: \(Format.grouped(Int(flood.posts))) posts, \(flood.postErrors) errors"))
        } else {
            goals.append(Goal(goal: "the flood is answered 429 while the others post normally", verdict: "SKIP", detail: "no flood phase"))
        }

        let badTokensGoal = "forged tokens are answered 429 past the address's read rate"
        if let forged = phases.first(where: { $0.attack == .badTokens }), let outcome = forged.outcome {
            let refused = outcome.statuses[429] ?? 0
            let rejected = outcome.statuses[401] ?? 0
            let served = outcome.statuses.filter { (200..<300).contains($0.key) }.values.reduce(0, +)
            // Open mode reads no token at all: nothing to refuse.
            let verdict = served > 0 && rejected == 0 ? "SKIP" : refused > 0 ? "PASS" : "FAIL"
            goals.append(Goal(goal: badTokensGoal, verdict: verdict,
                              detail: "\(Format.grouped(outcome.answers)) answers: \(Format.grouped(rejected)) x 401, "
                                  + "\(Format.grouped(refused)) x 429" + (served > 0 ? ", \(Format.grouped(served)) x 2xx (open mode)" : "")))
        } else {
            goals.append(Goal(goal: badTokensGoal, verdict: "SKIP", detail: "no bad-tokens phase"))
        }
        return goals
    }

    /// The report for people.
    var text: String {
        var lines: [String] = []
        lines.append("history-load abuse: \(url), server pid \(serverPID.map(String.init) ?? "unknown"), "
                     + "\(population) scrollback users + \(posters) posters (\(Format.fixed(postsPerSecond, 0)) posts/s), "
                     + "\(Format.fixed(phaseSeconds, 1)) s per phase")
        if let bigConversation { lines.append("largest pages: \(bigConversation)") }
        lines.append("")
        var table = [["phase", "normal req", "normal p99 ms", "normal errors", "attack outcome", "server peak RSS MB"]]
        for phase in phases {
            let errors = "\(phase.normalErrors)" + (phase.violations > 0 ? " (+\(phase.violations) violations)" : "")
            table.append([phase.name, Format.grouped(Int(phase.normalRequests)), Format.fixed(phase.normalP99Ms, 2), errors,
                          phase.outcome?.summary ?? "-", phase.peakRSSMegabytes.map { Format.fixed($0, 1) } ?? "-"])
        }
        lines += LoadReport.align(table)
        let errorLines = phases.filter { !$0.errors.isEmpty }
        if !errorLines.isEmpty {
            lines.append("")
            lines.append("normal users' errors:")
            for phase in errorLines {
                for (key, count) in phase.errors.sorted(by: { $0.value > $1.value }).prefix(5) {
                    lines.append("  \(phase.attack?.rawValue ?? "no attack"): \(count)  \(key)")
                }
            }
        }
        lines.append("")
        lines.append("goals:")
        for goal in goals {
            lines.append("  \(goal.verdict)  \(goal.goal)"
                         + (goal.detail.isEmpty ? "" : ": \(goal.detail)"))
        }
        let failed = goals.filter { $0.verdict == "FAIL" }.count
        lines.append("")
        lines.append(failed == 0 ? "result: PASS" : "result: FAIL (\(failed) of \(goals.count) goals)")
        return lines.joined(separator: "\n")
    }
}
