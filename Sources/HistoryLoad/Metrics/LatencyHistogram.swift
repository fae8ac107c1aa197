import Histogram

/// Latencies in microseconds, 1 µs to 10 minutes at 3 significant digits
/// (HdrHistogram: fixed memory, O(1) record, mergeable across threads).
typealias LatencyHistogram = Histogram<UInt64>

extension Histogram where Count == UInt64 {
    static func latency() -> Histogram<UInt64> {
        Histogram<UInt64>(lowestDiscernibleValue: 1, highestTrackableValue: 600_000_000,
                          numberOfSignificantValueDigits: .three)
    }

    /// Records nanoseconds as microseconds, clamped into range.
    @inline(__always)
    mutating func recordNanoseconds(_ nanoseconds: UInt64) {
        let micros = Swift.max(1, Swift.min(nanoseconds / 1000, highestTrackableValue))
        record(micros)
    }
}
