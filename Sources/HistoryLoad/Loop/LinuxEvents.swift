import Glibc

/// epoll and timerfd, looked up with `dlsym`: Glibc's Swift module exports
/// neither <sys/epoll.h> nor <sys/timerfd.h>, and the package may not add a
/// C target, so the functions are found once and called through
/// `@convention(c)` pointers (the real C calling convention).
///
/// `struct epoll_event` is packed on x86_64 (12 bytes, data at offset 4)
/// and natural elsewhere (16 bytes, data at 8); events are read and written
/// as bytes at those offsets.
enum LinuxEvents {
    static let readable: UInt32 = 0x001     // EPOLLIN
    static let writable: UInt32 = 0x004     // EPOLLOUT
    static let error: UInt32 = 0x008        // EPOLLERR
    static let hangUp: UInt32 = 0x010       // EPOLLHUP

    static let add: Int32 = 1               // EPOLL_CTL_ADD
    static let delete: Int32 = 2            // EPOLL_CTL_DEL
    static let modify: Int32 = 3            // EPOLL_CTL_MOD
    private static let closeOnExec: Int32 = 0o2000000   // EPOLL_CLOEXEC = TFD_CLOEXEC = O_CLOEXEC
    private static let nonBlocking: Int32 = 0o4000      // TFD_NONBLOCK = O_NONBLOCK
    private static let absoluteTime: Int32 = 1          // TFD_TIMER_ABSTIME

    #if arch(x86_64)
    static let eventStride = 12
    static let dataOffset = 4
    #else
    static let eventStride = 16
    static let dataOffset = 8
    #endif

    private typealias Create = @convention(c) (Int32) -> Int32
    private typealias Control = @convention(c) (Int32, Int32, Int32, UnsafeMutableRawPointer?) -> Int32
    private typealias Wait = @convention(c) (Int32, UnsafeMutableRawPointer?, Int32, Int32) -> Int32
    private typealias TimerCreate = @convention(c) (Int32, Int32) -> Int32
    private typealias TimerSet = @convention(c) (Int32, Int32, UnsafeRawPointer?, UnsafeMutableRawPointer?) -> Int32

    private struct Functions: @unchecked Sendable {
        // Safe because: immutable C function pointers, set once before publication.
        let create: Create
        let control: Control
        let wait: Wait
        let timerCreate: TimerCreate
        let timerSet: TimerSet
    }

    private static let functions: Functions? = {
        guard let handle = dlopen(nil, RTLD_NOW),
              let create = dlsym(handle, "epoll_create1"),
              let control = dlsym(handle, "epoll_ctl"),
              let wait = dlsym(handle, "epoll_wait"),
              let timerCreate = dlsym(handle, "timerfd_create"),
              let timerSet = dlsym(handle, "timerfd_settime") else { return nil }
        return Functions(create: unsafeBitCast(create, to: Create.self),
                         control: unsafeBitCast(control, to: Control.self),
                         wait: unsafeBitCast(wait, to: Wait.self),
                         timerCreate: unsafeBitCast(timerCreate, to: TimerCreate.self),
                         timerSet: unsafeBitCast(timerSet, to: TimerSet.self))
    }()

    /// A close-on-exec epoll descriptor, or nil with `errno` set.
    static func createEpoll() -> Int32? {
        guard let functions else { errno = ENOSYS; return nil }
        let fd = functions.create(closeOnExec)
        return fd >= 0 ? fd : nil
    }

    /// A non-blocking, close-on-exec timerfd on CLOCK_MONOTONIC, or nil with `errno` set.
    static func createTimer() -> Int32? {
        guard let functions else { errno = ENOSYS; return nil }
        let fd = functions.timerCreate(Int32(CLOCK_MONOTONIC), nonBlocking | closeOnExec)
        return fd >= 0 ? fd : nil
    }

    /// Arms `timer` to fire once at `due`, monotonic nanoseconds (at once when it passed).
    static func arm(_ timer: Int32, at due: UInt64) {
        guard let functions else { return }
        // struct itimerspec: interval then value, each { tv_sec, tv_nsec } as two longs.
        var setting: (Int, Int, Int, Int) = (0, 0, Int(due / 1_000_000_000), Int(max(1, due % 1_000_000_000)))
        _ = withUnsafeBytes(of: &setting) { functions.timerSet(timer, absoluteTime, $0.baseAddress, nil) }
    }

    /// EPOLL_CTL_ADD / MOD / DEL of `fd` with `events`, `token` as the event's data.
    @discardableResult
    static func control(_ epoll: Int32, _ operation: Int32, fd: Int32, events: UInt32, token: UInt64) -> Int32 {
        guard let functions else { return -1 }
        var storage: (UInt64, UInt64) = (0, 0)
        return withUnsafeMutableBytes(of: &storage) { event -> Int32 in
            event.storeBytes(of: events, toByteOffset: 0, as: UInt32.self)
            event.storeBytes(of: token, toByteOffset: dataOffset, as: UInt64.self)
            return functions.control(epoll, operation, fd, event.baseAddress)
        }
    }

    /// Waits up to `timeoutMilliseconds` for events, into `buffer` (`eventStride` bytes each); the count, 0 when interrupted.
    static func wait(_ epoll: Int32, into buffer: UnsafeMutableRawBufferPointer, timeoutMilliseconds: Int32) -> Int {
        guard let functions else { return 0 }
        return max(0, Int(functions.wait(epoll, buffer.baseAddress, Int32(buffer.count / eventStride), timeoutMilliseconds)))
    }

    static func event(at index: Int, in buffer: UnsafeMutableRawBufferPointer) -> (events: UInt32, token: UInt64) {
        let base = index * eventStride
        return (buffer.loadUnaligned(fromByteOffset: base, as: UInt32.self),
                buffer.loadUnaligned(fromByteOffset: base + dataOffset, as: UInt64.self))
    }
}
