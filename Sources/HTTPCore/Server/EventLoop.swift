import Dispatch
import Glibc

/// A serial queue that owns an epoll descriptor holding the sockets of its
/// connections, watched by ONE Dispatch read source.
///
/// Why: with a read source per connection every request cost Dispatch's
/// manager thread a wakeup, a hop to a worker, and a re-arm through the
/// manager's eventfd after the handler (docs/performance.md, "One read
/// source per event loop"). Here one source firing hands the loop every ready socket at
/// once (`epoll_wait` with timeout 0), so those costs are paid per batch.
/// Sockets stay non-blocking and nothing on the queue ever waits, so a
/// stalled client holds up no other.
///
/// The use of `@unchecked Sendable` is safe for this type because: `handlers`,
/// `nextToken`, `source` and `stopped` are read and written only on `queue`
/// (the source delivers there; `attach`, `detach`, `setInterest` are called
/// by connections running on `queue`; `stop` hops there), and `epoll` is
/// immutable until the cancel handler, which runs on `queue` too.
final class EventLoop: @unchecked Sendable {
    /// Events taken per `epoll_wait`.
    static let batchSize = 256
    /// After a batch, look again this many times before going back to
    /// Dispatch: requests that arrived while the batch ran are served
    /// without another wakeup.
    static let extraPolls = 2

    let queue: DispatchQueue
    private let epoll: Int32
    private var source: (any DispatchSourceRead)?
    private var handlers: [UInt64: HTTPConnection] = [:]
    private var nextToken: UInt64 = 0
    private var stopped = false

    init(index: Int) throws(SocketError) {
        // Over the shared default-QoS pool (as many threads as cores), not
        // the overcommit pool a plain serial queue gets, which may start a
        // thread per busy queue: measured faster and steadier on 2 cores.
        queue = DispatchQueue(label: "HTTPCore.EventLoop.\(index)", target: .global())
        epoll = try Epoll.create()
        let source = DispatchSource.makeReadSource(fileDescriptor: epoll, queue: queue)
        let epoll = self.epoll
        source.setEventHandler { [weak self] in self?.eventsReady() }
        source.setCancelHandler { _ = Glibc.close(epoll) }
        self.source = source
        source.activate()
    }

    deinit {
        // A server dropped without shutdown: the descriptor still goes.
        source?.cancel()
    }

    /// Adds a connection; its token names it in `setInterest`. On `queue`.
    func attach(_ connection: HTTPConnection) -> UInt64 {
        nextToken += 1
        handlers[nextToken] = connection
        return nextToken
    }

    /// Forgets a connection: events already fetched for it are dropped. On `queue`.
    func detach(_ token: UInt64) {
        handlers[token] = nil
    }

    /// Registers, changes or removes (`new == 0`) a socket's interest. On `queue`.
    func setInterest(fd: Int32, token: UInt64, from old: UInt32, to new: UInt32) throws(SocketError) {
        guard old != new else { return }
        try Epoll.update(epoll, fd: fd, token: token, from: old, to: new)
    }

    /// Cancels the source (which closes the epoll descriptor); for a server
    /// whose connections are all closed.
    func stop() {
        queue.async { [self] in
            guard !stopped else { return }
            stopped = true
            handlers = [:]
            source?.cancel()
            source = nil
        }
    }

    private func eventsReady() {
        let stride = Epoll.eventStride
        withUnsafeTemporaryAllocation(byteCount: Self.batchSize * stride, alignment: 8) { buffer in
            for _ in 0...Self.extraPolls {
                guard !stopped else { return }
                let count = Epoll.poll(epoll, into: buffer)
                guard count > 0 else { return }
                for index in 0..<count {
                    let (events, token) = Epoll.event(at: index, in: buffer)
                    handlers[token]?.handleEvents(events)
                }
            }
        }
    }
}
