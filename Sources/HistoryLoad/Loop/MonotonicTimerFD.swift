import Glibc

/// A monotonic timerfd, looked up with `dlsym`: Glibc's Swift module does not
/// export <sys/timerfd.h>, and the package may not add a C target, so the two
/// functions are found once and called through `@convention(c)` pointers
/// (the real C calling convention). epoll itself comes from HTTPCore's
/// `Epoll`, shared with the server's event loops.
///
/// Open-loop schedules wait on it because it is exact to the nanosecond,
/// where epoll_wait's timeout is in milliseconds.
enum MonotonicTimerFD {
    private static let closeOnExec: Int32 = 0o2000000   // TFD_CLOEXEC = O_CLOEXEC
    private static let nonBlocking: Int32 = 0o4000      // TFD_NONBLOCK = O_NONBLOCK
    private static let absoluteTime: Int32 = 1          // TFD_TIMER_ABSTIME

    private typealias TimerCreate = @convention(c) (Int32, Int32) -> Int32
    private typealias TimerSet = @convention(c) (Int32, Int32, UnsafeRawPointer?, UnsafeMutableRawPointer?) -> Int32

    /// The use of `@unchecked Sendable` is safe for this type because: it
    /// holds only immutable C function pointers, set once before publication.
    private struct Functions: @unchecked Sendable {
        let create: TimerCreate
        let set: TimerSet
    }

    private static let functions: Functions? = {
        guard let handle = dlopen(nil, RTLD_NOW),
              let create = dlsym(handle, "timerfd_create"),
              let set = dlsym(handle, "timerfd_settime") else { return nil }
        return Functions(create: unsafeBitCast(create, to: TimerCreate.self),
                         set: unsafeBitCast(set, to: TimerSet.self))
    }()

    /// A non-blocking, close-on-exec timerfd on CLOCK_MONOTONIC, or nil with `errno` set.
    static func create() -> Int32? {
        guard let functions else { errno = ENOSYS; return nil }
        let fd = functions.create(Int32(CLOCK_MONOTONIC), nonBlocking | closeOnExec)
        return fd >= 0 ? fd : nil
    }

    /// Arms `timer` to fire once at `due`, monotonic nanoseconds (at once when it passed).
    static func arm(_ timer: Int32, at due: UInt64) {
        guard let functions else { return }
        // struct itimerspec: interval then value, each { tv_sec, tv_nsec } as two longs.
        var setting: (Int, Int, Int, Int) = (0, 0, Int(due / 1_000_000_000), Int(max(1, due % 1_000_000_000)))
        _ = withUnsafeBytes(of: &setting) { functions.set(timer, absoluteTime, $0.baseAddress, nil) }
    }
}
