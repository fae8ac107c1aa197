import Synchronization

/// When the virtual users stop: at the deadline, or earlier when asked
/// (a test, or the suite moving to its next benchmark).
final class RunControl: Sendable {
    let startNanos: UInt64
    let deadlineNanos: UInt64
    private let stopped = Atomic<Bool>(false)

    init(duration: Duration) {
        startNanos = MonotonicClock.now()
        deadlineNanos = startNanos + duration.nanoseconds
    }

    @inline(__always)
    var shouldContinue: Bool {
        !stopped.load(ordering: .relaxed) && MonotonicClock.now() < deadlineNanos
    }

    func stop() { stopped.store(true, ordering: .relaxed) }

    /// Seconds left, at least `minimum`, for long-poll waits that must end with the run.
    func secondsLeft(minimum: Double = 0.1) -> Double {
        max(minimum, Double(Int64(deadlineNanos) - Int64(MonotonicClock.now())) / 1e9)
    }
}

/// Open-loop pacing: requests are due on a fixed schedule, whether or not
/// the previous answer came back in time.
///
/// Latency is measured from when a request was *due*, not from when it was
/// sent, so a stalled server is charged for every request it kept waiting
/// (coordinated omission, as Gil Tene describes it; wrk2 does the same).
struct Pacer {
    let intervalNanos: UInt64
    private(set) var nextDue: UInt64
    /// Segments in which this user sends nothing (``RunSegments``); nil: none.
    var pauses: PauseSchedule?

    /// - Parameters:
    ///   - rate: requests per second for this one user.
    ///   - phase: 0..<1, spreads users over one interval so they do not fire together.
    init(rate: Double, start: UInt64, phase: Double) {
        intervalNanos = UInt64(max(1, 1e9 / rate))
        nextDue = start + UInt64(phase * Double(intervalNanos))
    }

    /// Waits until the next request is due and returns its due time.
    mutating func waitForNextSlot() -> UInt64 {
        let due = takeSlot()
        MonotonicClock.sleep(until: due)
        return due
    }

    /// The next due time, without waiting for it (an event loop sets a timer instead).
    mutating func takeSlot() -> UInt64 {
        let due = pauses?.sending(nextDue) ?? nextDue
        nextDue = due + intervalNanos
        return due
    }
}
