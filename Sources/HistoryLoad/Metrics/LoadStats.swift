import Histogram
import Synchronization

/// The run's measurements: sharded counters plus the invariant log.
///
/// Shared by every virtual user thread; each user records into one shard.
final class LoadStats: Sendable {
    let shards: [StatsShard]
    let invariants = InvariantLog()

    init(shardCount: Int = 16) {
        shards = (0..<max(1, shardCount)).map { _ in StatsShard() }
    }

    func shard(for user: Int) -> StatsShard { shards[user % shards.count] }

    /// One progress interval: requests, their merged latency, errors. Resets the interval.
    func takeInterval() -> (requests: UInt64, p99Micros: UInt64, errors: Int) {
        var merged = LatencyHistogram.latency()
        var errors = 0
        for shard in shards {
            shard.state.withLock { state in
                for kind in RequestKind.allCases where kind.isThroughputRequest {
                    if let histogram = state.interval[kind.rawValue], histogram.totalCount > 0 {
                        merged.add(histogram)
                        state.interval[kind.rawValue]!.reset()
                    }
                }
                if let delivery = state.interval[RequestKind.delivery.rawValue], delivery.totalCount > 0 {
                    state.interval[RequestKind.delivery.rawValue]!.reset()
                }
                if let events = state.interval[RequestKind.events.rawValue], events.totalCount > 0 {
                    state.interval[RequestKind.events.rawValue]!.reset()
                }
                errors += state.intervalErrors
                state.intervalErrors = 0
            }
        }
        return (merged.totalCount, merged.totalCount > 0 ? merged.valueAtPercentile(99) : 0, errors)
    }

    /// Requests recorded so far of the kinds `include` takes, summed over
    /// the shards without merging their histograms (sampled during a run).
    func count(of include: (RequestKind) -> Bool) -> UInt64 {
        var total: UInt64 = 0
        for shard in shards {
            shard.state.withLock { state in
                for kind in RequestKind.allCases where include(kind) {
                    total += state.total[kind.rawValue]?.totalCount ?? 0
                }
            }
        }
        return total
    }

    /// Everything recorded so far, merged over the shards.
    func snapshot() -> StatsSnapshot {
        var snapshot = StatsSnapshot()
        for shard in shards {
            shard.state.withLock { state in
                for kind in RequestKind.allCases {
                    guard let histogram = state.total[kind.rawValue] else { continue }
                    if snapshot.histograms[kind] == nil { snapshot.histograms[kind] = .latency() }
                    snapshot.histograms[kind]!.add(histogram)
                    snapshot.bytes[kind, default: 0] += state.bytes[kind.rawValue]
                }
                snapshot.errors.merge(state.errors, uniquingKeysWith: +)
                snapshot.checks.merge(state.checks, uniquingKeysWith: +)
                snapshot.peakWindowMessages = max(snapshot.peakWindowMessages, state.peakWindowMessages)
            }
        }
        return snapshot
    }
}

/// A merged copy of every shard, for the final report.
struct StatsSnapshot {
    var histograms: [RequestKind: LatencyHistogram] = [:]
    var bytes: [RequestKind: UInt64] = [:]
    var errors: [String: Int] = [:]
    var checks: [String: Int] = [:]
    var peakWindowMessages = 0
}
