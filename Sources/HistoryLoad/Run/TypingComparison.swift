import Foundation

/// `run --scenario typing`: what typers cost the readers. The same readers
/// (`deep` pages, closed loop, `--clients` of them) run twice, each time for
/// half of `--duration`: alone, then beside `--writers` typers (default
/// 1,000) who each send `PUT .../typing` every 2 s to one of the live
/// conversations. The page rates of the two halves are the measure
/// (issue 24 asks for pages no more than 5% slower at 1,000 typers).
///
/// Tokens mode only: typing is shown under a user id, and open mode has
/// none (the server answers 403).
enum TypingComparison {
    /// A typer sends this often: once per the contract's 2 s.
    static let callsPerTyperPerSecond = 0.5
    static let defaultTypers = 1_000

    struct Outcome {
        let alone: LoadReport
        let withTypers: LoadReport
        let typers: Int

        var passed: Bool { alone.passed && withTypers.passed }

        var text: String {
            let before = TypingComparison.pageRate(alone), after = TypingComparison.pageRate(withTypers)
            let change = before > 0 ? (after - before) / before * 100 : 0
            let typing = withTypers.kinds.first { $0.kind == RequestKind.typing.name }
            return [
                "== readers alone ==", alone.text, "",
                "== readers beside \(typers) typers ==", withTypers.text, "",
                "typing: pages \(Format.fixed(before, 0))/s alone, \(Format.fixed(after, 0))/s beside \(typers) typers "
                    + "(\(change >= 0 ? "+" : "")\(Format.fixed(change, 1))%); typing calls "
                    + "\(Format.fixed(typing?.perSecond ?? 0, 0))/s, p99 \(Format.fixed(typing?.p99Ms ?? 0, 2)) ms",
            ].joined(separator: "\n")
        }
    }

    static func execute(_ plan: LoadPlan) throws -> Outcome {
        guard plan.settings.credentials != nil else {
            throw LoadError("typing needs tokens mode (--jwt-secret-file or --jwt-es256-key, and `seed --add-members`): open mode has no user to show typing")
        }
        let typers = plan.writers ?? defaultTypers
        var half = plan
        half.duration = plan.duration / 2
        half.scenario = .deep
        half.roles = Array(repeating: LoadRun.Role(scenario: .deep, paced: false), count: plan.clients)
        let alone = try LoadRun.execute(half)
        half.scenario = .typing
        half.roles = half.roles! + Array(repeating: LoadRun.Role(scenario: .typing, paced: true, rate: callsPerTyperPerSecond,
                                                                 make: { _ in TypingUser() }),
                                         count: typers)
        let withTypers = try LoadRun.execute(half)
        return Outcome(alone: alone, withTypers: withTypers, typers: typers)
    }

    /// Pages per second over every page kind the readers asked for.
    static func pageRate(_ report: LoadReport) -> Double {
        report.kinds.filter { $0.kind.hasPrefix("page") }.reduce(0) { $0 + $1.perSecond }
    }
}
