import CSystem
import Glibc

/// The three epoll calls, through the `CSystem` C module so the C compiler,
/// not Swift, knows the layout of `struct epoll_event`.
///
/// Errors that only a bug of ours can cause (a closed or wrong descriptor, a
/// bad pointer or argument) stop the process with a message, as SwiftNIO
/// does: closing the connection quietly would hide the bug.
///
/// Public because the server's worker threads and history-load's client loops
/// both drive epoll, and these bindings are the one place that knows how.
public enum Epoll {
    public static let readable: UInt32 = csystem_epoll_in
    public static let writable: UInt32 = csystem_epoll_out
    public static let error: UInt32 = csystem_epoll_err
    public static let hangUp: UInt32 = csystem_epoll_hup
    /// Reports one event, then nothing until the registration is modified again.
    public static let oneShot: UInt32 = csystem_epoll_oneshot
    /// Reports a change of readiness once, not the readiness itself again and again.
    public static let edgeTriggered: UInt32 = csystem_epoll_edge_triggered

    /// One ready event: its flags and the token it was registered with.
    public typealias Event = csystem_epoll_event

    /// The `op` of epoll_ctl.
    public enum Operation: Sendable {
        case add
        case delete
        case modify

        var code: Int32 {
            switch self {
            case .add: csystem_epoll_ctl_add
            case .delete: csystem_epoll_ctl_del
            case .modify: csystem_epoll_ctl_mod
            }
        }
    }

    /// Bytes per event in the buffers `wait` fills.
    public static let eventStride = MemoryLayout<Event>.stride

    /// A new close-on-exec epoll descriptor.
    public static func create() throws(SocketError) -> Int32 {
        let fd = csystem_epoll_create()
        if fd < 0 { throw SocketError(errno: Glibc.errno, function: "epoll_create1") }
        return fd
    }

    /// epoll_ctl: adds, modifies or deletes `fd` with interest `events` and
    /// `token` as the event's data. Throws what the peer or the system can
    /// cause (ENOMEM, ENOSPC, and ENOENT/EEXIST for a registration out of
    /// step); stops on EBADF, EFAULT and EINVAL, which only a bug can cause.
    public static func control(_ epoll: Int32, _ operation: Operation, fd: Int32, events: UInt32,
                               token: UInt64) throws(SocketError) {
        guard csystem_epoll_ctl(epoll, operation.code, fd, events, token) < 0 else { return }
        let code = Glibc.errno
        switch code {
        case EBADF, EFAULT, EINVAL:
            preconditionFailure("epoll_ctl(\(epoll), \(operation), fd \(fd)): \(String(cString: strerror(code)))")
        default:
            throw SocketError(errno: code, function: "epoll_ctl")
        }
    }

    /// Waits up to `timeoutMilliseconds` (-1: forever) for events, into
    /// `buffer` (`eventStride` bytes each, at most 1024 taken); the count, 0
    /// when interrupted. Stops on errors only a bug can cause.
    public static func wait(_ epoll: Int32, into buffer: UnsafeMutableRawBufferPointer, timeoutMilliseconds: Int32) -> Int {
        let capacity = buffer.count / eventStride
        let events = buffer.bindMemory(to: Event.self)
        let count = csystem_epoll_wait(epoll, events.baseAddress, Int32(capacity), timeoutMilliseconds)
        if count >= 0 { return Int(count) }
        let code = Glibc.errno
        precondition(code == EINTR, "epoll_wait(\(epoll)): \(String(cString: strerror(code)))")
        return 0
    }

    /// The `index`th event of a buffer `wait` filled.
    public static func event(at index: Int, in buffer: UnsafeMutableRawBufferPointer) -> (events: UInt32, token: UInt64) {
        let event = buffer.load(fromByteOffset: index * eventStride, as: Event.self)
        return (event.events, event.token)
    }
}
