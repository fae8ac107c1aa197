import Dispatch
import Foundation
import Synchronization

/// The few threads that run the requests whose handling may wait on the
/// store (a read, a role lookup, a long-poll's re-read after a wake), so
/// that an event loop never does: a 1 MiB page, a read queued behind busy
/// reader connections, or a network round trip to a database server
/// stalls one of these threads, never the loop's other connections.
///
/// Sized like the store's reader connections: a job holds at most one
/// reader at a time, so with as many threads as readers no job waits for
/// a connection, and more threads would only wait for one.
///
/// Back-pressure: a connection hands the responder one request at a time
/// and reads no further request (past a 64 KiB high-water mark) until it is
/// answered; a parked long-poll is such a request. So the queue holds at
/// most one job per open connection, a bound the server already enforces
/// (`--max-connections`), and a busy pool slows the clients that asked for
/// reads, each on its own connection, without refusing anyone.
///
/// Threads, not Dispatch: a job blocks, and Dispatch's shared pool (which
/// the event loops run on, one thread per core) does not grow on Linux
/// when its threads block, so a blocked read there takes a loop's thread.
///
/// The threads hold the queue, not the pool: when the pool is released
/// (or `stop()` is called) they finish the queued jobs and exit.
public final class ReadPool: Sendable {
    /// The jobs waiting, and the count of threads still to exit.
    private let queue: JobQueue
    /// How many threads run jobs.
    public let threadCount: Int

    /// Starts `threads` threads (at least 1).
    public init(threads: Int, name: String = "HistoryAPI.ReadPool") {
        threadCount = max(1, threads)
        queue = JobQueue()
        for index in 0..<threadCount {
            let queue = self.queue
            let thread = Thread { queue.work() }
            thread.name = "\(name).\(index)"
            // As much as a main thread: a handler's stack is deep (routing,
            // SQLite, encoding); only the pages touched cost memory.
            thread.stackSize = 8 << 20
            thread.start()
        }
    }

    deinit {
        queue.stop(threads: threadCount)
    }

    /// Runs `job` on one of the threads, in submission order as threads
    /// free up. After `stop()`, runs it at once on the caller's thread, so
    /// that a long-poll answered during shutdown is never lost.
    public func submit(_ job: @escaping @Sendable () -> Void) {
        queue.submit(job)
    }

    /// Jobs submitted and not yet started.
    public var queuedCount: Int { queue.queuedCount }

    /// Jobs running now.
    public var runningCount: Int { queue.runningCount }

    /// Lets the threads finish what is queued and exit; later jobs run on
    /// their caller's thread. Does not wait.
    public func stop() {
        queue.stop(threads: threadCount)
    }
}

/// The FIFO the threads of a `ReadPool` take jobs from: a `Mutex` for the
/// list, a semaphore counting jobs (plus one per thread at `stop`).
private final class JobQueue: Sendable {
    private struct State {
        var jobs: [@Sendable () -> Void] = []
        /// The next job to run: jobs before it ran already (compacted in bulk).
        var head = 0
        var running = 0
        var stopped = false
    }

    private let state = Mutex(State())
    private let ready = DispatchSemaphore(value: 0)

    func submit(_ job: @escaping @Sendable () -> Void) {
        let queued = state.withLock { state -> Bool in
            guard !state.stopped else { return false }
            state.jobs.append(job)
            return true
        }
        if queued { ready.signal() } else { job() }
    }

    var queuedCount: Int { state.withLock { $0.jobs.count - $0.head } }

    var runningCount: Int { state.withLock { $0.running } }

    /// Every signal is taken by one wait: a job's runs it, and once the
    /// queue is empty after `stop`, each thread's extra signal ends it, so
    /// each thread exits exactly once and no queued job is left behind.
    func stop(threads: Int) {
        let first = state.withLock { state -> Bool in
            defer { state.stopped = true }
            return !state.stopped
        }
        guard first else { return }
        for _ in 0..<threads { ready.signal() }
    }

    /// A thread's life: take the oldest job, run it, until stopped and empty.
    func work() {
        while true {
            ready.wait()
            let job = state.withLock { state -> (@Sendable () -> Void)? in
                guard state.head < state.jobs.count else { return nil }
                let job = state.jobs[state.head]
                state.head += 1
                if state.head == state.jobs.count {
                    state.jobs.removeAll(keepingCapacity: state.jobs.capacity <= 4096)
                    state.head = 0
                } else if state.head >= 1024 && state.head * 2 >= state.jobs.count {
                    state.jobs.removeFirst(state.head)
                    state.head = 0
                }
                state.running += 1
                return job
            }
            guard let job else { return }
            job()
            state.withLock { $0.running -= 1 }
        }
    }
}
