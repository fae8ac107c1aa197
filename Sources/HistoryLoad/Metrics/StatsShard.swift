import Histogram
import Synchronization

/// Counters and histograms for a group of virtual users.
///
/// Users record into the shard their index picks, so the lock is almost
/// never contended (a handful of users per shard), while the progress
/// thread can still read a consistent interval once a second.
final class StatsShard: Sendable {
    let state = Mutex(ShardState())
}

/// Everything one shard counts. Histograms are created on first use: a run
/// touches three or four kinds, not all sixteen.
struct ShardState {
    var total = [LatencyHistogram?](repeating: nil, count: RequestKind.allCases.count)
    var interval = [LatencyHistogram?](repeating: nil, count: RequestKind.allCases.count)
    var bytes = [UInt64](repeating: 0, count: RequestKind.allCases.count)
    var errors: [String: Int] = [:]
    var intervalErrors = 0
    var checks: [String: Int] = [:]
    /// The most messages any virtual user's window held.
    var peakWindowMessages = 0

    @inline(__always)
    mutating func record(_ kind: RequestKind, nanoseconds: UInt64, bytes count: Int) {
        let slot = kind.rawValue
        if total[slot] == nil {
            total[slot] = .latency()
            interval[slot] = .latency()
        }
        total[slot]!.recordNanoseconds(nanoseconds)
        interval[slot]!.recordNanoseconds(nanoseconds)
        bytes[slot] &+= UInt64(count)
    }

    mutating func recordError(_ key: String) {
        errors[key, default: 0] += 1
        intervalErrors += 1
    }
}
