#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Nanoseconds on `CLOCK_MONOTONIC`: never jumps with the wall clock, so a
/// latency is always end minus start, and one process's readings compare
/// (the tail scenario puts a send time in a `client_id` and reads it back).
enum MonotonicClock {
    @inline(__always)
    static func now() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) &* 1_000_000_000 &+ UInt64(spec.tv_nsec)
    }

    /// Sleeps until `deadline` (monotonic nanoseconds); returns at once when it passed.
    static func sleep(until deadline: UInt64) {
        let now = now()
        guard deadline > now else { return }
        sleep(nanoseconds: deadline - now)
    }

    static func sleep(nanoseconds: UInt64) {
        var request = timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
    }
}

extension Duration {
    /// Whole nanoseconds, for the monotonic clock's arithmetic.
    var nanoseconds: UInt64 {
        let (seconds, attoseconds) = components
        return UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds)) / 1_000_000_000
    }

    var secondsDouble: Double { Double(nanoseconds) / 1e9 }
}
