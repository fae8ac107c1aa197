import Synchronization

/// A run cut into equal segments, for comparisons inside one run (the
/// typing comparison): the users with a rate of their own send in the even
/// segments only (0, 2, 4, ...), the others all along, and the run calls
/// `sample` at every boundary, the start and the end included.
///
/// Keeping the paused users connected, instead of running each side as a
/// run of its own, leaves the comparison with one difference between its
/// sides: their requests. Separate runs also reconnected the typers, warmed
/// the server anew, and moved with the machine between runs by more than
/// typing costs.
final class RunSegments: Sendable {
    let length: Duration
    let count: Int
    private let sampler: @Sendable (LoadStats) -> Sample
    private let samples = Mutex<[Sample]>([])

    /// What is counted at a boundary: totals since the run started.
    struct Sample: Sendable {
        var at: UInt64
        var counts: [Double]
    }

    init(length: Duration, count: Int, sample: @escaping @Sendable (LoadStats) -> Sample) {
        self.length = length
        self.count = count
        self.sampler = sample
    }

    var duration: Duration { length * count }

    /// The boundaries' samples so far, the start first.
    var taken: [Sample] { samples.withLock { $0 } }

    /// The instant of boundary `index` (0 is the run's start).
    func boundary(_ index: Int, start: UInt64) -> UInt64 {
        start + UInt64(index) * length.nanoseconds
    }

    func sample(_ stats: LoadStats) {
        let sample = sampler(stats)
        samples.withLock { $0.append(sample) }
    }

    /// When the users with a rate of their own pause.
    func pauses(start: UInt64) -> PauseSchedule {
        PauseSchedule(start: start, segmentNanos: length.nanoseconds)
    }
}

/// The odd segments of a run, in which a paced user sends nothing: a slot
/// due in one moves a segment on, to the same place in the next even one,
/// so the users keep the spread their phases gave them.
struct PauseSchedule: Sendable {
    let start: UInt64
    let segmentNanos: UInt64

    func isPaused(_ instant: UInt64) -> Bool {
        instant >= start && ((instant - start) / segmentNanos) % 2 == 1
    }

    /// `due`, or the same place one segment on when `due` is paused.
    func sending(_ due: UInt64) -> UInt64 {
        isPaused(due) ? due + segmentNanos : due
    }
}
