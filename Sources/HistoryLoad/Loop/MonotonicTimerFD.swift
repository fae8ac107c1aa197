import CSystem
import Glibc

/// A monotonic timerfd, through the `CSystem` C module (Glibc's Swift module
/// does not export <sys/timerfd.h>). epoll itself comes from HTTPCore's
/// `Epoll`, shared with the server's event loops.
///
/// Open-loop schedules wait on it because it is exact to the nanosecond,
/// where epoll_wait's timeout is in milliseconds.
enum MonotonicTimerFD {
    /// A non-blocking, close-on-exec timerfd on CLOCK_MONOTONIC, or nil with `errno` set.
    static func create() -> Int32? {
        let fd = csystem_timerfd_create_monotonic()
        return fd >= 0 ? fd : nil
    }

    /// Arms `timer` to fire once at `due`, monotonic nanoseconds (at once
    /// when it passed). Fails only for a descriptor that is not our timer:
    /// a bug, so it stops.
    static func arm(_ timer: Int32, at due: UInt64) {
        guard csystem_timerfd_arm_absolute(timer, due) == 0 else {
            preconditionFailure("timerfd_settime(\(timer)): \(String(cString: strerror(errno)))")
        }
    }
}
