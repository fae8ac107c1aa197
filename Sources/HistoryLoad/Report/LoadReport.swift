import Histogram
import Foundation

/// The result of a run, printed for people and written as JSON for machines
/// (`--json FILE`): the same fields either way.
struct LoadReport: Codable, Sendable, JSONFileReport {
    struct KindRow: Codable, Sendable {
        var kind: String
        var count: UInt64
        var perSecond: Double
        var p50Ms: Double
        var p90Ms: Double
        var p99Ms: Double
        var p999Ms: Double
        var maxMs: Double
        var bytes: UInt64
    }

    struct InvariantRow: Codable, Sendable {
        var name: String
        var violations: Int
        var examples: [String]
    }

    var scenario: String
    var mode: String
    var clients: Int
    var users: [String: Int]
    var conversations: Int
    var largestConversation: String?
    var largestMessageCount: Int64
    var durationSeconds: Double
    var requests: UInt64
    var requestsPerSecond: Double
    /// Over all request kinds except long-polls and the read-back.
    var p50Ms: Double
    var p99Ms: Double
    var bytes: UInt64
    var kinds: [KindRow]
    var errors: [String: Int]
    var errorCount: Int
    var checks: [String: Int]
    var invariants: [InvariantRow]
    var violationCount: Int
    var ackedPosts: Int
    var ackedPostsReadable: Int
    var ackedPostsMissing: Int
    var peakWindowMessages: Int
    var windowCapacity: Int
    var idleConnectionsOpen: Int

    var passed: Bool { violationCount == 0 && ackedPostsMissing == 0 }

    init(plan: LoadPlan, catalog: ConversationCatalog, roles: [LoadRun.Role], elapsedSeconds: Double, wallSeconds: Double,
         snapshot: StatsSnapshot, invariants: InvariantLog, readBack: ReadBack.Outcome, idleConnectionsOpen: Int) {
        scenario = plan.scenario == .mix ? "mix(\(plan.mix))" : plan.scenario.rawValue
        mode = plan.rate.map { "open loop, \(Format.fixed($0, 0)) req/s scheduled" } ?? "closed loop"
        clients = plan.clients
        users = Dictionary(roles.map { ($0.scenario == .post && [.tail, .inbox, .feed].contains(plan.scenario) ? "writer" : $0.scenario.rawValue, 1) },
                           uniquingKeysWith: +)
        conversations = catalog.entries.count
        largestConversation = catalog.largest?.id
        largestMessageCount = catalog.largest?.messageCount ?? 0
        durationSeconds = elapsedSeconds
        let seconds = max(elapsedSeconds, 0.001)
        var all = LatencyHistogram.latency()
        var rows: [KindRow] = []
        var totalBytes: UInt64 = 0
        for kind in RequestKind.allCases {
            guard let histogram = snapshot.histograms[kind], histogram.totalCount > 0 else { continue }
            if kind.isThroughputRequest { all.add(histogram) }
            let kindBytes = snapshot.bytes[kind] ?? 0
            totalBytes += kindBytes
            rows.append(KindRow(kind: kind.name, count: histogram.totalCount,
                                perSecond: Double(histogram.totalCount) / seconds,
                                p50Ms: Self.ms(histogram.valueAtPercentile(50)), p90Ms: Self.ms(histogram.valueAtPercentile(90)),
                                p99Ms: Self.ms(histogram.valueAtPercentile(99)), p999Ms: Self.ms(histogram.valueAtPercentile(99.9)),
                                maxMs: Self.ms(histogram.max), bytes: kindBytes))
        }
        kinds = rows
        requests = all.totalCount
        requestsPerSecond = Double(all.totalCount) / seconds
        p50Ms = all.totalCount > 0 ? Self.ms(all.valueAtPercentile(50)) : 0
        p99Ms = all.totalCount > 0 ? Self.ms(all.valueAtPercentile(99)) : 0
        bytes = totalBytes
        errors = snapshot.errors
        errorCount = snapshot.errors.values.reduce(0, +)
        checks = snapshot.checks
        let entries = invariants.entries
        self.invariants = Invariant.allCases.map { invariant in
            let entry = entries[invariant.rawValue]
            return InvariantRow(name: invariant.rawValue, violations: entry?.count ?? 0, examples: entry?.examples ?? [])
        }
        violationCount = entries.values.reduce(0) { $0 + $1.count }
        ackedPosts = readBack.acked
        ackedPostsReadable = readBack.verified
        ackedPostsMissing = readBack.missing
        peakWindowMessages = snapshot.peakWindowMessages
        windowCapacity = plan.settings.pageSize * plan.settings.windowPages
        self.idleConnectionsOpen = idleConnectionsOpen
    }

    static func ms(_ micros: UInt64) -> Double { Double(micros) / 1000 }

    /// The report for people.
    var text: String {
        var lines: [String] = []
        let userText = users.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
        lines.append("history-load run: \(scenario), \(mode), \(userText), \(Format.fixed(durationSeconds, 1)) s")
        lines.append("conversations: \(conversations) (largest \(largestConversation ?? "-"): \(Format.grouped(Int(largestMessageCount))) messages)"
                     + (idleConnectionsOpen > 0 ? ", \(idleConnectionsOpen) idle connections held open" : ""))
        lines.append("")
        lines.append("requests: \(Format.grouped(Int(requests))) (\(Format.fixed(requestsPerSecond, 0)) req/s), "
                     + "p50 \(Format.fixed(p50Ms, 2)) ms, p99 \(Format.fixed(p99Ms, 2)) ms, body bytes \(Format.bytes(bytes))")
        lines.append("")
        let header = ["kind", "count", "per s", "p50 ms", "p90 ms", "p99 ms", "p99.9 ms", "max ms", "bytes"]
        var table = [header]
        for row in kinds {
            table.append([row.kind, Format.grouped(Int(row.count)), Format.fixed(row.perSecond, 0), Format.fixed(row.p50Ms, 2),
                          Format.fixed(row.p90Ms, 2), Format.fixed(row.p99Ms, 2), Format.fixed(row.p999Ms, 2),
                          Format.fixed(row.maxMs, 2), Format.bytes(row.bytes)])
        }
        lines += Self.align(table)
        lines.append("")
        if errors.isEmpty {
            lines.append("errors: none")
        } else {
            lines.append("errors: \(errorCount)")
            for (key, count) in errors.sorted(by: { $0.value > $1.value }) { lines.append("  \(count)  \(key)") }
        }
        lines.append("")
        lines.append("invariants checked while loading:")
        for (name, count) in checks.sorted(by: { $0.key < $1.key }) {
            lines.append("  \(Format.grouped(count))  \(name)")
        }
        for row in invariants {
            lines.append("  \(row.violations == 0 ? "ok  " : "FAIL") \(row.name)" + (row.violations == 0 ? "" : ": \(row.violations) violations"))
            for example in row.examples { lines.append("         \(example)") }
        }
        if ackedPosts > 0 {
            lines.append("  acked posts: \(Format.grouped(ackedPosts)), read back \(Format.grouped(ackedPostsReadable)), missing \(ackedPostsMissing)")
        }
        if peakWindowMessages > 0 {
            lines.append("  peak messages held by one virtual user's window: \(peakWindowMessages) (capacity \(windowCapacity))")
        }
        lines.append("")
        lines.append(passed ? "result: PASS (no invariant violated)" : "result: FAIL (\(violationCount + ackedPostsMissing) violations)")
        return lines.joined(separator: "\n")
    }

    static func align(_ rows: [[String]]) -> [String] {
        guard let first = rows.first else { return [] }
        let widths = first.indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            row.enumerated().map { column, cell in
                let pad = String(repeating: " ", count: widths[column] - cell.count)
                return column == 0 ? cell + pad : pad + cell
            }.joined(separator: "  ")
        }
    }
}
