import Dispatch
import Foundation
import HTTPCore

/// The few threads that run the requests whose handling may wait on the
/// store (a read, a role lookup, a long-poll's re-read after a wake), so
/// that no server thread blocks past its limit: a 1 MiB page, a read queued behind busy
/// reader connections, or a network round trip to a database server
/// stalls one of these threads, never another connection.
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
/// the store's delivery and timers run on, one thread per core) does not
/// grow on Linux when its threads block, so a blocked read there stalls them.
///
/// The threads hold the queue, not the pool: when the pool is released
/// (or `stop()` is called) they finish the queued jobs and exit.
public final class ReadPool: Sendable {
    /// The jobs waiting, and the count of threads still to exit.
    private let queue: JobQueue
    /// How many threads run jobs.
    public let threadCount: Int

    /// Starts `threads` threads (at least 1).
    public init(threads: Int, name: String = "read-pool") {
        threadCount = max(1, threads)
        queue = JobQueue()
        for index in 0..<threadCount {
            let queue = self.queue
            let thread = Thread {
                // The policy before the name: a thread found by its name has it.
                ThreadScheduling.runThisThreadAsBatch()
                ThreadName.set("\(name)-\(index)")
                queue.work()
            }
            // As much as a main thread: a handler's stack is deep (routing,
            // SQLite, encoding); only the pages touched cost memory.
            thread.stackSize = 8 << 20
            thread.start()
        }
    }

    deinit {
        queue.stop()
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
        queue.stop()
    }
}

/// The FIFO the threads of a `ReadPool` take jobs from.
///
/// An `NSCondition` (a plain pthread mutex and condition variable), not
/// Synchronization's `Mutex` with a semaphore: on Linux `Mutex` is a
/// priority-inheritance futex, whose contended path goes through the
/// kernel's rt_mutex, and every job took it three times (submit, take,
/// done) from a dozen threads: 6% of the server's CPU on PostgreSQL's deep
/// pages (`perf record`, docs/performance.md). Here a job costs its
/// submitter one lock and a thread one, since a thread that finishes a job
/// takes the next in the same critical section, and a signal is sent only
/// when a thread is waiting.
///
/// `@unchecked Sendable`: every stored property but the constant
/// `condition` is read and written only with `condition` locked.
private final class JobQueue: @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [@Sendable () -> Void] = []
    /// The next job to run: jobs before it ran already (compacted in bulk).
    private var head = 0
    private var running = 0
    /// Threads waiting for a job.
    private var idle = 0
    private var stopped = false

    func submit(_ job: @escaping @Sendable () -> Void) {
        condition.lock()
        guard !stopped else {
            condition.unlock()
            job()
            return
        }
        jobs.append(job)
        if idle > 0 { condition.signal() }
        condition.unlock()
    }

    var queuedCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return jobs.count - head
    }

    var runningCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return running
    }

    /// Wakes every thread: each finishes what is queued, then exits.
    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }

    /// A thread's life: take the oldest job, run it, until stopped and empty.
    func work() {
        condition.lock()
        while true {
            while head == jobs.count && !stopped {
                idle += 1
                condition.wait()
                idle -= 1
            }
            guard head < jobs.count else { break }
            let job = jobs[head]
            head += 1
            if head == jobs.count {
                jobs.removeAll(keepingCapacity: jobs.capacity <= 4096)
                head = 0
            } else if head >= 1024 && head * 2 >= jobs.count {
                jobs.removeFirst(head)
                head = 0
            }
            running += 1
            condition.unlock()
            job()
            condition.lock()
            running -= 1
        }
        condition.unlock()
    }
}
