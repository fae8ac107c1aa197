import Glibc

/// The three epoll calls, with C linkage found by `dlsym`: Glibc's Swift
/// module does not export <sys/epoll.h>, and the package may not add a C
/// target, so the functions are looked up once and called through
/// `@convention(c)` pointers (the real C calling convention, unlike
/// `@_silgen_name`).
///
/// Events are read and written as bytes where `struct epoll_event` keeps
/// them: the kernel headers pack it on x86_64 (12 bytes, data at offset 4)
/// and leave it natural elsewhere (16 bytes, data at 8).
///
/// Public because the server's event loops and history-load's client loops
/// both drive epoll, and these bindings are the one place that knows how.
public enum Epoll {
    public static let readable: UInt32 = 0x001     // EPOLLIN
    public static let writable: UInt32 = 0x004     // EPOLLOUT
    public static let error: UInt32 = 0x008        // EPOLLERR
    public static let hangUp: UInt32 = 0x010       // EPOLLHUP

    /// The `op` of epoll_ctl.
    public enum Operation: Int32, Sendable {
        case add = 1        // EPOLL_CTL_ADD
        case delete = 2     // EPOLL_CTL_DEL
        case modify = 3     // EPOLL_CTL_MOD
    }

    private static let closeOnExec: Int32 = 0o2000000

    #if arch(x86_64)
    public static let eventStride = 12
    static let dataOffset = 4
    #else
    public static let eventStride = 16
    static let dataOffset = 8
    #endif

    private typealias Create = @convention(c) (Int32) -> Int32
    private typealias Control = @convention(c) (Int32, Int32, Int32, UnsafeMutableRawPointer?) -> Int32
    private typealias Wait = @convention(c) (Int32, UnsafeMutableRawPointer?, Int32, Int32) -> Int32

    /// The use of `@unchecked Sendable` is safe for this type because: it
    /// holds only immutable C function pointers, set before it is published.
    private struct Functions: @unchecked Sendable {
        let create: Create
        let control: Control
        let wait: Wait
    }

    private static let functions: Functions? = {
        guard let handle = dlopen(nil, RTLD_NOW),
              let create = dlsym(handle, "epoll_create1"),
              let control = dlsym(handle, "epoll_ctl"),
              let wait = dlsym(handle, "epoll_wait") else { return nil }
        return Functions(create: unsafeBitCast(create, to: Create.self),
                         control: unsafeBitCast(control, to: Control.self),
                         wait: unsafeBitCast(wait, to: Wait.self))
    }()

    /// A new close-on-exec epoll descriptor.
    public static func create() throws(SocketError) -> Int32 {
        guard let functions else { throw SocketError(errno: ENOSYS, function: "epoll_create1") }
        let fd = functions.create(closeOnExec)
        if fd < 0 { throw SocketError(errno: Glibc.errno, function: "epoll_create1") }
        return fd
    }

    /// Moves `fd` from interest `old` to `new` (0 = not registered), with
    /// `token` as the event's data. Level-triggered.
    static func update(_ epoll: Int32, fd: Int32, token: UInt64, from old: UInt32, to new: UInt32) throws(SocketError) {
        let operation: Operation = new == 0 ? .delete : (old == 0 ? .add : .modify)
        try control(epoll, operation, fd: fd, events: new, token: token)
    }

    /// epoll_ctl: adds, modifies or deletes `fd` with interest `events` and
    /// `token` as the event's data.
    public static func control(_ epoll: Int32, _ operation: Operation, fd: Int32, events: UInt32,
                               token: UInt64) throws(SocketError) {
        guard let functions else { throw SocketError(errno: ENOSYS, function: "epoll_ctl") }
        var storage: (UInt64, UInt64) = (0, 0)
        let result = withUnsafeMutableBytes(of: &storage) { event -> Int32 in
            event.storeBytes(of: events, toByteOffset: 0, as: UInt32.self)
            event.storeBytes(of: token, toByteOffset: dataOffset, as: UInt64.self)
            return functions.control(epoll, operation.rawValue, fd, event.baseAddress)
        }
        if result < 0 { throw SocketError(errno: Glibc.errno, function: "epoll_ctl") }
    }

    /// Ready events without waiting, into `buffer` (`eventStride` bytes
    /// each); the count, 0 when none or interrupted.
    static func poll(_ epoll: Int32, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        wait(epoll, into: buffer, timeoutMilliseconds: 0)
    }

    /// Waits up to `timeoutMilliseconds` (-1: forever) for events, into
    /// `buffer` (`eventStride` bytes each); the count, 0 when interrupted.
    public static func wait(_ epoll: Int32, into buffer: UnsafeMutableRawBufferPointer, timeoutMilliseconds: Int32) -> Int {
        guard let functions else { return 0 }
        let count = functions.wait(epoll, buffer.baseAddress, Int32(buffer.count / eventStride), timeoutMilliseconds)
        return max(0, Int(count))
    }

    /// The `index`th event of a buffer `wait` filled.
    public static func event(at index: Int, in buffer: UnsafeMutableRawBufferPointer) -> (events: UInt32, token: UInt64) {
        let base = index * eventStride
        return (buffer.loadUnaligned(fromByteOffset: base, as: UInt32.self),
                buffer.loadUnaligned(fromByteOffset: base + dataOffset, as: UInt64.self))
    }
}
