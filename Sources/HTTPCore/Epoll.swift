import Glibc

/// The three epoll calls, with C linkage found by `dlsym`: Glibc's Swift
/// module does not export <sys/epoll.h>, and the package may not add a C
/// target, so the functions are looked up once and called through
/// `@convention(c)` pointers (the real C calling convention, unlike
/// `@_silgen_name`).
///
/// `Event` mirrors `struct epoll_event`, which the kernel headers pack on
/// x86_64 (12 bytes, data at offset 4) and leave natural elsewhere.
enum Epoll {
    static let readable: UInt32 = 0x001     // EPOLLIN
    static let writable: UInt32 = 0x004     // EPOLLOUT
    static let error: UInt32 = 0x008        // EPOLLERR
    static let hangUp: UInt32 = 0x010       // EPOLLHUP

    private static let controlAdd: Int32 = 1
    private static let controlDelete: Int32 = 2
    private static let controlModify: Int32 = 3
    private static let closeOnExec: Int32 = 0o2000000

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
    static func create() throws(SocketError) -> Int32 {
        guard let functions else { throw SocketError(errno: ENOSYS, function: "epoll_create1") }
        let fd = functions.create(closeOnExec)
        if fd < 0 { throw SocketError(errno: Glibc.errno, function: "epoll_create1") }
        return fd
    }

    /// Moves `fd` from interest `old` to `new` (0 = not registered), with
    /// `token` as the event's data. Level-triggered.
    static func update(_ epoll: Int32, fd: Int32, token: UInt64, from old: UInt32, to new: UInt32) throws(SocketError) {
        guard let functions else { throw SocketError(errno: ENOSYS, function: "epoll_ctl") }
        let operation = new == 0 ? controlDelete : (old == 0 ? controlAdd : controlModify)
        var storage: (UInt64, UInt64) = (0, 0)
        let result = withUnsafeMutableBytes(of: &storage) { event -> Int32 in
            event.storeBytes(of: new, toByteOffset: 0, as: UInt32.self)
            event.storeBytes(of: token, toByteOffset: dataOffset, as: UInt64.self)
            return functions.control(epoll, operation, fd, event.baseAddress)
        }
        if result < 0 { throw SocketError(errno: Glibc.errno, function: "epoll_ctl") }
    }

    /// Ready events without waiting, into `buffer` (`eventStride` bytes
    /// each); the count, 0 when none or interrupted.
    static func poll(_ epoll: Int32, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard let functions else { return 0 }
        let count = functions.wait(epoll, buffer.baseAddress, Int32(buffer.count / eventStride), 0)
        return max(0, Int(count))
    }

    static func event(at index: Int, in buffer: UnsafeMutableRawBufferPointer) -> (events: UInt32, token: UInt64) {
        let base = index * eventStride
        return (buffer.loadUnaligned(fromByteOffset: base, as: UInt32.self),
                buffer.loadUnaligned(fromByteOffset: base + dataOffset, as: UInt64.self))
    }
}
