import CSystem
import Foundation
import Glibc
import Synchronization

/// The threads that serve every connection of a server. They share one
/// epoll set in which each connection's socket is registered one-shot, so
/// a ready socket wakes exactly one thread, and that thread runs the
/// connection's request to its end, store read included, then re-arms it.
///
/// Why not event loops that hand reads to a pool: each page then changed
/// threads twice (loop to pool, pool back to loop), and those switches
/// were the largest part of a deep page's CPU on two cores
/// (docs/performance.md, "What the read pool's hand-offs cost a deep
/// page"). Here a request stays on the thread that read it. A slow read
/// (a cold page, a 1 MiB answer, a database round trip) holds that one
/// thread while the others serve every other connection: at most
/// `blockingLimit` threads are inside a blocking call at once
/// (`RequestContext.whileBlockingAllowed`), so at least
/// `threadCount - blockingLimit` always answer what needs no wait.
///
/// Work for a connection from other threads (an answer that comes later,
/// a stream's next piece, a timer, shutdown) goes through the connection's
/// mailbox (`HTTPConnection.schedule`); a connection that is not running
/// is put on the ready queue, and the wake-up eventfd (edge-triggered, in
/// the same epoll set) brings one thread to run it.
///
/// The threads hold the workers until `stop()`; the descriptors close when
/// the last reference goes (`deinit`), so a late `schedule` from another
/// thread never signals a descriptor number that was closed and reused.
///
/// The use of `@unchecked Sendable` is safe for this type because: `epoll`,
/// `wakeUp` and `stopSignal` are immutable and closed only in `deinit`;
/// `connections` and `ready` are guarded by their locks; the counters are
/// atomic.
final class ConnectionWorkers: @unchecked Sendable {
    private static let wakeUpToken = UInt64.max
    /// Events taken per `epoll_wait`: a batch costs one system call and
    /// no wake-up for the events after the first; those a thread has not
    /// handled when it is about to block go to other threads
    /// (`handOverRestOfBatch`). A 304 cost 35 µs taking one event at a
    /// time, 25 µs taking up to 16 (docs/performance.md).
    private static let batchSize = 16

    /// The events and ready connections a worker took, and how far it got
    /// (its thread's own).
    private final class Batch {
        var buffer: UnsafeMutableRawBufferPointer?
        var count = 0
        var next = 0
        /// Taken from the ready queue, run in order (`runReady`).
        var ready: [HTTPConnection] = []
        var nextReady = 0
    }
    private static let stopToken = UInt64.max - 1

    /// The ready queue: connections with scheduled work and no thread yet.
    private struct Ready {
        var connections: [HTTPConnection] = []
        var head = 0
        /// The eventfd was signalled and no thread took the signal yet.
        var signalled = false
    }

    let threadCount: Int
    let blockingLimit: Int
    private let epoll: Int32
    private let wakeUp: Int32
    private let stopSignal: Int32
    private let connections = Mutex<(byToken: [UInt64: HTTPConnection], next: UInt64)>(([:], 0))
    /// An `NSLock` (a plain pthread mutex), not `Mutex`: every answer that
    /// comes from another thread passes here, and `Mutex`'s contended path
    /// is the kernel's priority-inheritance futex (see `ReadPool`).
    private let readyLock = NSLock()
    private nonisolated(unsafe) var ready = Ready()
    private let permits: Atomic<Int>
    /// Each worker thread's `Batch`.
    private let batchKey: pthread_key_t
    private let stopped = Atomic(false)

    /// Starts `threads` threads (at least 1), of which at most
    /// `blockingLimit` (at most `threads - 1`) may block at once.
    init(threads: Int, blockingLimit: Int) throws(SocketError) {
        threadCount = max(1, threads)
        self.blockingLimit = max(0, min(blockingLimit, threadCount - 1))
        permits = Atomic(self.blockingLimit)
        epoll = try Epoll.create()
        wakeUp = csystem_eventfd_create()
        stopSignal = csystem_eventfd_create()
        guard wakeUp >= 0, stopSignal >= 0 else {
            let error = SocketError(errno: Glibc.errno, function: "eventfd")
            for fd in [wakeUp, stopSignal, epoll] where fd >= 0 { _ = Glibc.close(fd) }
            throw error
        }
        do {
            // Edge-triggered: each signal wakes one thread, once.
            try Epoll.control(epoll, .add, fd: wakeUp, events: Epoll.readable | Epoll.edgeTriggered,
                              token: Self.wakeUpToken)
            // Level-triggered: every thread sees it, and leaves.
            try Epoll.control(epoll, .add, fd: stopSignal, events: Epoll.readable, token: Self.stopToken)
        } catch {
            for fd in [wakeUp, stopSignal, epoll] { _ = Glibc.close(fd) }
            throw error
        }
        var key = pthread_key_t()
        guard pthread_key_create(&key, nil) == 0 else {
            for fd in [wakeUp, stopSignal, epoll] { _ = Glibc.close(fd) }
            throw SocketError(errno: EAGAIN, function: "pthread_key_create")
        }
        batchKey = key
        for index in 0..<threadCount {
            let thread = Thread { [self] in
                // The policy before the name: a thread found by its name has it.
                ThreadScheduling.runThisThreadAsBatch()
                ThreadName.set("http-worker-\(index)")
                work()
            }
            // A handler's stack is deep (routing, SQLite, encoding); only
            // the pages touched cost memory.
            thread.stackSize = 8 << 20
            thread.start()
        }
    }

    deinit {
        for fd in [wakeUp, stopSignal, epoll] { _ = Glibc.close(fd) }
        pthread_key_delete(batchKey)
    }

    // MARK: - Connections

    /// Adds a connection; its token names it in `control`.
    func attach(_ connection: HTTPConnection) -> UInt64 {
        connections.withLock { connections in
            connections.next += 1
            connections.byToken[connections.next] = connection
            return connections.next
        }
    }

    /// Forgets a connection: events already taken for it are dropped.
    func detach(_ token: UInt64) {
        _ = connections.withLock { $0.byToken.removeValue(forKey: token) }
    }

    private func connection(for token: UInt64) -> HTTPConnection? {
        connections.withLock { $0.byToken[token] }
    }

    /// epoll_ctl on a connection's socket, in this set.
    func control(_ operation: Epoll.Operation, fd: Int32, events: UInt32, token: UInt64) throws(SocketError) {
        try Epoll.control(epoll, operation, fd: fd, events: events, token: token)
    }

    /// Queues a connection whose mailbox got work while no thread ran it.
    func makeReady(_ connection: HTTPConnection) {
        addReady { $0.connections.append(connection) }
    }

    /// Adds to the ready queue under its lock (nothing once stopped) and
    /// signals a thread unless one was signalled and has not taken it yet.
    private func addReady(_ add: (inout Ready) -> Void) {
        readyLock.lock()
        guard !stopped.load(ordering: .relaxed) else {
            readyLock.unlock()
            return
        }
        add(&ready)
        let signal = !ready.signalled
        ready.signalled = true
        readyLock.unlock()
        if signal { _ = csystem_eventfd_signal(wakeUp) }
    }

    /// Runs the oldest ready connections, up to `batchSize` of them, one
    /// after the other on this thread; signals again when more wait, so
    /// another thread takes the next ones meanwhile.
    ///
    /// Why a batch: the answers that come from elsewhere come in bursts (a
    /// tick of typing calls decided together, the polls one append wakes),
    /// and each is small. Taken one at a time, every answer woke another
    /// sleeping thread (each taker signalled the next): a context switch per
    /// answer, about a third of a typing call's CPU on two cores. The
    /// connections left when a run is about to block go back to the queue
    /// (`handOverRestOfBatch`), so none waits behind a slow read.
    private func runReady(_ batch: Batch) {
        readyLock.lock()
        let available = ready.connections.count - ready.head
        guard available > 0 else {
            ready.signalled = false
            readyLock.unlock()
            return
        }
        let end = ready.head + min(available, Self.batchSize)
        batch.ready.append(contentsOf: ready.connections[ready.head..<end])
        ready.head = end
        let more = end < ready.connections.count
        if !more {
            ready.connections.removeAll(keepingCapacity: ready.connections.capacity <= 1024)
            ready.head = 0
            ready.signalled = false
        }
        readyLock.unlock()
        if more { _ = csystem_eventfd_signal(wakeUp) }
        batch.nextReady = 0
        while batch.nextReady < batch.ready.count {
            let connection = batch.ready[batch.nextReady]
            batch.nextReady += 1
            connection.run()
        }
        batch.ready.removeAll(keepingCapacity: true)
        batch.nextReady = 0
    }

    /// Puts connections taken from the ready queue back at its front (they
    /// were first in line) and signals a thread to take them.
    private func requeue(_ connections: ArraySlice<HTTPConnection>) {
        guard !connections.isEmpty else { return }
        addReady { $0.connections.replaceSubrange($0.head..<$0.head, with: connections) }
    }

    // MARK: - Blocking

    /// Runs `body` on this thread when fewer than `blockingLimit` threads
    /// are blocked now; nil without running it otherwise.
    func whileBlockingAllowed<T>(_ body: () throws -> T) rethrows -> T? {
        var available = permits.load(ordering: .relaxed)
        while true {
            guard available > 0 else { return nil }
            let (exchanged, original) = permits.weakCompareExchange(
                expected: available, desired: available - 1, successOrdering: .acquiring, failureOrdering: .relaxed)
            if exchanged { break }
            available = original
        }
        defer { permits.add(1, ordering: .releasing) }
        handOverRestOfBatch()
        return try body()
    }

    // MARK: - The threads

    private func work() {
        let batch = Batch()
        let pointer = Unmanaged.passRetained(batch).toOpaque()
        pthread_setspecific(batchKey, pointer)
        defer {
            pthread_setspecific(batchKey, nil)
            Unmanaged<Batch>.fromOpaque(pointer).release()
        }
        withUnsafeTemporaryAllocation(byteCount: Self.batchSize * Epoll.eventStride, alignment: 8) { buffer in
            while true {
                batch.count = Epoll.wait(epoll, into: buffer, timeoutMilliseconds: -1)
                batch.next = 0
                batch.buffer = buffer
                while batch.next < batch.count {
                    let (events, token) = Epoll.event(at: batch.next, in: buffer)
                    batch.next += 1
                    switch token {
                    case Self.stopToken:
                        return
                    case Self.wakeUpToken:
                        runReady(batch)
                    default:
                        connection(for: token)?.deliver(events)
                    }
                }
            }
        }
    }

    /// Before this thread blocks: the events and ready connections it took
    /// and has not handled go to other threads (a connection's events into
    /// its mailbox and onto the ready queue, a wake-up signalled again, the
    /// ready connections back to the queue's front), so none waits behind a
    /// slow read. A no-op on a thread that is not a worker.
    private func handOverRestOfBatch() {
        guard let pointer = pthread_getspecific(batchKey) else { return }
        let batch = Unmanaged<Batch>.fromOpaque(pointer).takeUnretainedValue()
        if batch.nextReady < batch.ready.count {
            requeue(batch.ready[batch.nextReady...])
            batch.nextReady = batch.ready.count
        }
        guard let buffer = batch.buffer else { return }
        while batch.next < batch.count {
            let (events, token) = Epoll.event(at: batch.next, in: buffer)
            batch.next += 1
            switch token {
            case Self.stopToken:
                break  // level-triggered: every thread sees it again
            case Self.wakeUpToken:
                _ = csystem_eventfd_signal(wakeUp)
            default:
                connection(for: token)?.deliverElsewhere(events)
            }
        }
    }

    /// Lets every thread exit and drops every connection it knew; for a
    /// server whose connections are all closed.
    func stop() {
        readyLock.lock()
        let first = !stopped.exchange(true, ordering: .relaxed)
        ready = Ready()
        readyLock.unlock()
        guard first else { return }
        connections.withLock { $0.byToken = [:] }
        _ = csystem_eventfd_signal(stopSignal)
    }
}
