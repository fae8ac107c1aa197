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
/// Order: fair, not first come first served. Each job names who it is
/// for (`key`: its connection), and a free thread takes the waiting job
/// whose key used the least pool time recently (`FairShare`). A swarm of
/// connections asking for the most expensive pages keeps one job each in
/// the queue, but a connection asking for cheap pages has used less time
/// than any of them, so its job goes first instead of behind all of theirs.
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

    /// Runs `job` on one of the threads as they free up, the least
    /// charged `key` first (ties in submission order), and charges `key`
    /// the time the job takes. `key` names the connection the job answers
    /// (its remote address); jobs without one share a key. After `stop()`,
    /// runs it at once on the caller's thread, so that a long-poll answered
    /// during shutdown is never lost.
    public func submit(key: String = "", _ job: @escaping @Sendable () -> Void) {
        queue.submit(key: key, job)
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

/// The jobs the threads of a `ReadPool` take, in `FairShare` order: a
/// `Mutex` for the list, a semaphore counting jobs (plus one per thread at
/// `stop`).
private final class JobQueue: Sendable {
    private struct Waiting {
        var key: String
        /// Submission order, which breaks ties between equal charges.
        var sequence: UInt64
        var job: @Sendable () -> Void
    }

    private struct State {
        /// Unordered: a pick scans them all (at most one per connection).
        var waiting: [Waiting] = []
        var nextSequence: UInt64 = 0
        var shares = FairShare()
        var running = 0
        var stopped = false
    }

    private let state = Mutex(State())
    private let ready = DispatchSemaphore(value: 0)

    func submit(key: String, _ job: @escaping @Sendable () -> Void) {
        let queued = state.withLock { state -> Bool in
            guard !state.stopped else { return false }
            state.waiting.append(Waiting(key: key, sequence: state.nextSequence, job: job))
            state.nextSequence &+= 1
            return true
        }
        if queued { ready.signal() } else { job() }
    }

    var queuedCount: Int { state.withLock { $0.waiting.count } }

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

    /// A thread's life: take the least charged key's job, run it, charge
    /// its key the time it took, until stopped and empty.
    func work() {
        while true {
            ready.wait()
            let picked = state.withLock { state -> Waiting? in
                guard !state.waiting.isEmpty else { return nil }
                let now = FairShare.now()
                var best = 0
                var bestCharge = state.shares.charge(of: state.waiting[0].key, at: now)
                for index in state.waiting.indices.dropFirst() {
                    let candidate = state.waiting[index]
                    let charge = state.shares.charge(of: candidate.key, at: now)
                    if charge < bestCharge
                        || (charge == bestCharge && candidate.sequence < state.waiting[best].sequence) {
                        best = index
                        bestCharge = charge
                    }
                }
                state.waiting.swapAt(best, state.waiting.count - 1)
                state.running += 1
                return state.waiting.removeLast()
            }
            guard let picked else { return }
            let started = FairShare.now()
            picked.job()
            let ended = FairShare.now()
            state.withLock { state in
                state.running -= 1
                state.shares.charge(picked.key, nanoseconds: ended - started, at: ended)
            }
        }
    }
}
