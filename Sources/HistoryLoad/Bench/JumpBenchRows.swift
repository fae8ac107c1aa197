import Foundation
import HTTPCore

/// The bench's jump rows (docs/performance.md, "Jump by time"): a jump by
/// time deep in the largest conversation against the `around` page of the
/// same message, interleaved request by request on one connection, so a
/// busy machine's drift falls on both alike (goal: within 15% at 1M depth).
/// Each jump is checked too: its anchor must be the first message of the
/// asked time (of that time or later, the one before it earlier) and its
/// page the anchor's `around` page, else the row counts a violation.
extension BenchSuite {
    /// The targets: this many messages in the oldest tenth of the conversation.
    static let jumpTargets = 200

    func jumpRows(largest: ConversationCatalog.Entry, log: (String) -> Void) throws -> [Row] {
        let s = settings
        log("bench: jump by time vs around, \(largest.id)")
        let connection = try HTTPClientConnection(host: s.endpoint.host, port: s.endpoint.port, timeout: .seconds(30))
        defer { connection.close() }
        let authorization = s.baseline?.adminAuthorization()
        func get<T: Decodable>(_ target: String, as type: T.Type) throws -> (T, UInt64) {
            var headers: HTTPHeaders = ["Host": s.endpoint.host]
            if let authorization { headers.add(name: "Authorization", value: authorization) }
            let started = ContinuousClock.now
            let response = try connection.request(HTTPRequest(method: .get, target: target, headers: headers))
            let elapsed = ContinuousClock.now - started
            guard response.status == 200 else { throw LoadError("jump rows: \(target) answered \(response.status)") }
            let micros = UInt64(elapsed.components.seconds) * 1_000_000 + UInt64(elapsed.components.attoseconds / 1_000_000_000_000)
            return (try JSONDecoder().decode(T.self, from: Data(response.body)), micros)
        }

        // Targets deep down: the times of `jumpTargets` messages spread over
        // the oldest tenth, each distinct time once, and the oldest message's.
        // A jump to a time anchors on the first message of that time: the
        // smallest id at or after it (created times never decrease in id
        // order). Bulk-loaded history shares its times by chunk, so several
        // probes may name one time; each time is a target once.
        guard let oldest = largest.oldestID, let newest = largest.newestID, newest > oldest else {
            throw LoadError("jump rows: \(largest.id) has no messages")
        }
        let span = max(1, (newest - oldest) / 10)
        var times: [String] = []
        let (bottom, _) = try get("\(largest.messagesPrefix)after=0&limit=1", as: JumpPage.self)
        if let first = bottom.messages.first { times.append(first.created_at) }
        for index in 0..<Self.jumpTargets {
            let probe = oldest + span * Int64(index) / Int64(Self.jumpTargets)
            let (page, _) = try get("\(largest.messagesPrefix)around=\(probe)&limit=1", as: JumpPage.self)
            if let time = page.messages.first?.created_at, !times.contains(time) { times.append(time) }
        }

        // Each round: the jump and the `around` page of the message it
        // anchored on, which must be the same page; the anchor must be of
        // the asked time or later, and the message before it earlier. The
        // first of the two reads the page's rows out of memory the CPU has
        // not touched lately and leaves them warm for the second, so every
        // other round asks `around` first (from the anchor the jump found
        // before): neither pays the cold read every time.
        var around: [UInt64] = [], jump: [UInt64] = [], aroundFirst: [Bool] = []
        var violations: [String] = []
        var anchorOfTime: [String: Int64] = [:]
        let deadline = ContinuousClock.now + s.duration * 2
        var rounds = 0
        repeat {
            for time in times {
                let known = rounds % 2 == 1 ? anchorOfTime[time] : nil
                let earlier = try known.map { try get("\(largest.messagesPrefix)around=\($0)&limit=50", as: JumpPage.self) }
                let (byTime, jumpMicros) = try get("\(largest.messagesPrefix)around_time=\(time)&limit=50", as: JumpPage.self)
                guard let anchor = byTime.anchor?.id, let index = byTime.anchor?.index, byTime.messages.indices.contains(index) else {
                    if violations.count < 5 { violations.append("around_time=\(time): no anchor") }
                    continue
                }
                let (byID, aroundMicros) = try earlier.flatMap { known == anchor ? $0 : nil }
                    ?? get("\(largest.messagesPrefix)around=\(anchor)&limit=50", as: JumpPage.self)
                around.append(aroundMicros)
                jump.append(jumpMicros)
                aroundFirst.append(known == anchor)
                anchorOfTime[time] = anchor
                let anchored = byTime.messages[index]
                let before = index > 0 ? byTime.messages[index - 1].created_at : nil
                if anchored.id != anchor || anchored.created_at < time || (before.map { $0 >= time } ?? (anchor != oldest))
                    || byTime.messages.map(\.id) != byID.messages.map(\.id) {
                    if violations.count < 5 { violations.append("around_time=\(time): anchor \(anchor) is not the first message of that time") }
                }
            }
            rounds += 1
        } while ContinuousClock.now < deadline && rounds < 50
        let depth = "\(Format.grouped(Int(largest.messageCount))) messages, oldest tenth"
        let url = s.endpoint.description
        let aroundRow = Self.measuredRow("`around` page deep in \(largest.id) (\(depth))", kind: "page around", micros: around,
                                         violations: [], largest: largest,
                                         command: "bench --url \(url) (jump rows)", note: "\(Set(anchorOfTime.values).count) targets, interleaved with the jump row, each first in every other round")
        var jumpRow = Self.measuredRow("Jump by time deep in \(largest.id) (\(depth))", kind: "page around_time", micros: jump,
                                       violations: violations, largest: largest,
                                       command: "bench --url \(url) (jump rows)", note: "")
        jumpRow.note = Self.jumpRatioNote(jump: jump, around: around, aroundFirst: aroundFirst)
            + "; anchors checked against `around`" + (violations.isEmpty ? "" : " **\(violations.count) violations**")
        return [aroundRow, jumpRow]
    }

    /// The median of the pairs' latency ratios (jump over `around`), over
    /// all pairs and over each order they were asked in; "none" where a
    /// set is empty (a run too short for a second round, or no anchor).
    static func jumpRatioNote(jump: [UInt64], around: [UInt64], aroundFirst: [Bool]) -> String {
        let ratios = zip(jump, around).map { Double($0) / Double(max($1, 1)) }
        func median(_ chosen: [Double]) -> String { chosen.isEmpty ? "none" : percent(Self.median(chosen)) }
        let byOrder = [false, true].map { first in median(zip(ratios, aroundFirst).filter { $0.1 == first }.map(\.0)) }
        return "median latency ratio to `around`: \(median(ratios)) (jump first \(byOrder[0]), `around` first \(byOrder[1]))"
    }

    /// A row from latencies measured one by one on a single connection.
    static func measuredRow(_ name: String, kind: String, micros: [UInt64], violations: [String],
                            largest: ConversationCatalog.Entry, command: String, note: String) -> Row {
        let sorted = micros.sorted()
        func percentile(_ p: Double) -> Double {
            guard !sorted.isEmpty else { return 0 }
            return Double(sorted[min(sorted.count - 1, Int((Double(sorted.count) * p / 100).rounded(.up)) - 1)]) / 1000
        }
        let seconds = max(Double(micros.reduce(0, +)) / 1e6, 0.001)
        let rate = Double(micros.count) / seconds
        let report = LoadReport(measured: kind, count: micros.count, seconds: seconds, p50: percentile(50), p90: percentile(90),
                                p99: percentile(99), p999: percentile(99.9), max: percentile(100), largest: largest,
                                violations: violations)
        return Row(name: name, command: command, report: report, rate: rate, p50: percentile(50), p99: percentile(99),
                   p999: percentile(99.9), note: note)
    }

    private struct JumpPage: Decodable {
        struct Message: Decodable {
            let id: Int64
            let created_at: String
        }
        struct Anchor: Decodable {
            let id: Int64?
            let index: Int?
        }
        let messages: [Message]
        let anchor: Anchor?
    }
}

extension LoadReport {
    /// The report of a row measured outside `LoadRun` (one connection, one
    /// request at a time): one kind, its latencies, and its violations.
    init(measured kind: String, count: Int, seconds: Double, p50: Double, p90: Double, p99: Double, p999: Double,
         max: Double, largest: ConversationCatalog.Entry, violations: [String]) {
        scenario = kind
        mode = "closed loop, one connection"
        clients = 1
        users = [kind: 1]
        conversations = 1
        largestConversation = largest.id
        largestMessageCount = largest.messageCount
        durationSeconds = seconds
        requests = UInt64(count)
        requestsPerSecond = Double(count) / seconds
        p50Ms = p50
        p99Ms = p99
        bytes = 0
        kinds = [KindRow(kind: kind, count: UInt64(count), perSecond: Double(count) / seconds, p50Ms: p50, p90Ms: p90,
                         p99Ms: p99, p999Ms: p999, maxMs: max, bytes: 0)]
        errors = [:]
        errorCount = 0
        checks = ["jump anchors": count]
        invariants = [InvariantRow(name: "jump anchor is the smallest id at or after the time", violations: violations.count,
                                   examples: violations)]
        violationCount = violations.count
        ackedPosts = 0
        ackedPostsReadable = 0
        ackedPostsMissing = 0
        peakWindowMessages = 0
        windowCapacity = 0
        idleConnectionsOpen = 0
    }
}
