import Foundation
import Histogram

/// What `run --scenario streams` prints.
struct StreamsReport {
    let plan: StreamsRun.Plan
    let opened: Int
    let refused: Int
    let posted: Int
    let failedPosts: Int
    let deliveries: Int
    let latency: Histogram<UInt64>
    let endedEarly: Int
    let outOfOrder: Int
    let serverPID: Int32?
    let baselineRSS: UInt64?
    let idleRSS: UInt64?
    let rssPerIdleStream: Double?

    /// Every stream open, every event in order, none ended under load.
    var passed: Bool { refused == 0 && outOfOrder == 0 && endedEarly == 0 && failedPosts == 0 }

    var text: String {
        var lines: [String] = []
        lines.append("scenario streams: \(plan.streams) streams on \(plan.conversations) conversations, "
                     + "\(plan.writers) writers at \(String(format: "%.1f", plan.postsPerSecond)) posts/s for "
                     + "\(String(format: "%.1f", plan.duration.secondsDouble)) s against \(plan.endpoint)")
        lines.append("streams open: \(opened) (refused or failed: \(refused)); ended by the server during the run: \(endedEarly)")
        lines.append("posts: \(posted) acknowledged, \(failedPosts) failed; deliveries: \(deliveries) "
                     + "(expected about \(posted * plan.streams / max(1, plan.conversations)))")
        if latency.totalCount > 0 {
            lines.append("post-to-delivery: p50 \(Self.ms(latency.valueAtPercentile(50))) ms, "
                         + "p99 \(Self.ms(latency.valueAtPercentile(99))) ms, max \(Self.ms(latency.max)) ms")
        } else {
            lines.append("post-to-delivery: no delivery measured")
        }
        if let rssPerIdleStream, let baselineRSS, let idleRSS, let serverPID {
            lines.append("server RSS (pid \(serverPID)): \(baselineRSS / 1024) KiB before, \(idleRSS / 1024) KiB with the streams idle: "
                         + "\(String(format: "%.1f", rssPerIdleStream / 1024)) KiB per idle stream")
        } else {
            lines.append("server RSS: not measured (the server is not a process on this machine this user may read)")
        }
        lines.append("events out of order: \(outOfOrder)")
        lines.append(passed ? "result: PASS" : "result: FAIL")
        return lines.joined(separator: "\n")
    }

    private static func ms(_ micros: UInt64) -> String { String(format: "%.2f", Double(micros) / 1000) }
}
