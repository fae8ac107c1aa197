import Dispatch
import CSystem
import Foundation
import Synchronization

/// Gathers the reads asked at the same time into one statement each (for
/// pages: `PostgresPageBatch`), like a group commit for reads: at most
/// `maximumRunning` statements run at once, and a read asked while they
/// all run waits for the next one, which reads it together with every
/// read that arrived meanwhile, up to `maximumBatch`.
///
/// A read is asked in one of two ways. `read(_:_:)` blocks its thread
/// until the answer is there. `read(_:_:answer:)` returns at once when
/// the read has to wait, and its answer is a call made later on the
/// thread that ran its statement: a page asked that way holds no thread
/// while it waits, so the HTTP thread that read the request goes back to
/// the other connections, and the answers of one statement are written
/// without waking a thread for each (docs/performance.md, "Pages answered
/// by the statement's thread").
///
/// The thread whose read finds a statement free runs it at once (its own
/// read first, then the oldest waiting): a lone read waits for nothing.
/// When a statement is done, the turn goes to the oldest read still
/// waiting: a blocked reader leads the next statement on its own thread;
/// for a read that is a call, one of the batcher's own threads (at most
/// `maximumRunning`, started when first needed) leads it and keeps
/// leading while reads wait. So no read waits for more than the
/// statements ahead of it, and a thread that serves connections never
/// runs more than its own read's statement.
///
/// The use of `@unchecked Sendable` is safe for this type because `queue`,
/// `running`, `turns`, `drivers` and `closed` are read and written only
/// while `lock` is held, and a waiting read's `outcome` is set under that
/// lock before it is delivered (its semaphore signalled, or its call made
/// after the lock is released), which orders it before it is read.
final class ReadBatcher<Request: Sendable, Rows: Sendable, Failure: Error>: @unchecked Sendable {
    typealias Outcome = Result<(rows: Rows, index: Int), Failure>
    /// Runs one statement for the requests it is given, in that order.
    typealias Statement = @Sendable ([Request]) throws(Failure) -> Rows

    let maximumRunning: Int
    let maximumBatch: Int
    /// The name of the batcher's own threads (at most 15 bytes are kept).
    let threadName: String

    private final class Waiting {
        enum Delivery {
            /// A thread blocked in `read(_:_:)`; signalled without an outcome, it leads.
            case thread(DispatchSemaphore)
            case call(@Sendable (Outcome) -> Void)
        }

        let request: Request
        let statement: Statement
        let delivery: Delivery
        /// Set before the read is delivered.
        var outcome: Outcome?

        init(_ request: Request, _ statement: @escaping Statement, _ delivery: Delivery) {
            self.request = request
            self.statement = statement
            self.delivery = delivery
        }

        /// Hands the outcome over: wakes the blocked thread, or makes the call.
        func deliver() {
            switch delivery {
            case .thread(let woken): woken.signal()
            case .call(let answer): outcome.map(answer)
            }
        }
    }

    private let lock = NSLock()
    private var queue: [Waiting] = []
    private var running = 0
    /// Turns handed to the batcher's threads, not yet taken.
    private var turns: [Waiting] = []
    private let turnSignal = DispatchSemaphore(value: 0)
    private var drivers = 0
    private var closed = false
    private let statementCount = Atomic(0)
    private let requestCount = Atomic(0)

    init(maximumRunning: Int, maximumBatch: Int, threadName: String = "pg-page-reads") {
        self.maximumRunning = max(1, maximumRunning)
        self.maximumBatch = max(1, maximumBatch)
        self.threadName = threadName
    }

    /// Statements run and reads they answered, since the start (tests, `/metrics`).
    var counts: (statements: Int, requests: Int) {
        (statementCount.load(ordering: .relaxed), requestCount.load(ordering: .relaxed))
    }

    /// Reads waiting for a statement now (tests).
    var waitingCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return queue.count
    }

    /// Reads `request` with whatever reads wait beside it, on this thread
    /// or another's statement, and returns its outcome.
    func read(_ request: Request, _ statement: @escaping Statement) -> Outcome {
        let woken = DispatchSemaphore(value: 0)
        let own = Waiting(request, statement, .thread(woken))
        if !takeTurn(own) {
            woken.wait()
            if let outcome = own.outcome { return outcome }
            // Handed the turn: `own` was taken off the queue for it.
        }
        if let next = runStatement(own) { pass(next) }
        return own.outcome!
    }

    /// Reads `request` with whatever reads wait beside it and calls
    /// `answer` with its outcome: on this thread before returning when a
    /// statement is free, else later, on the thread that runs the
    /// statement that reads it. `answer` must not block for long: the
    /// reads after it in that statement wait for it.
    func read(_ request: Request, _ statement: @escaping Statement,
              answer: @escaping @Sendable (Outcome) -> Void) {
        let own = Waiting(request, statement, .call(answer))
        guard takeTurn(own) else { return }
        if let next = runStatement(own) { pass(next) }
    }

    /// Lets the batcher's threads exit once the turns handed to them are
    /// run. Reads asked after it still run, on their callers' threads.
    func close() {
        lock.lock()
        closed = true
        let count = drivers
        lock.unlock()
        for _ in 0..<count { turnSignal.signal() }
    }

    // MARK: - Private

    /// True when `own` may run its statement now; else it was queued.
    private func takeTurn(_ own: Waiting) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard running < maximumRunning else {
            queue.append(own)
            return false
        }
        running += 1
        return true
    }

    /// Runs one statement for `leader` and the oldest waiting reads,
    /// delivers every outcome but a blocked leader's own (it reads it on
    /// return), and returns the read that has the turn next (nil: the
    /// statement's place is free again).
    private func runStatement(_ leader: Waiting) -> Waiting? {
        lock.lock()
        let company = Array(queue.prefix(maximumBatch - 1))
        queue.removeFirst(company.count)
        lock.unlock()
        let batch = [leader] + company
        let rows = Result { () throws(Failure) in try leader.statement(batch.map(\.request)) }
        statementCount.add(1, ordering: .relaxed)
        requestCount.add(batch.count, ordering: .relaxed)
        lock.lock()
        for (index, waiting) in batch.enumerated() {
            waiting.outcome = rows.map { ($0, index) }
        }
        let next = queue.isEmpty ? nil : queue.removeFirst()
        if next == nil { running -= 1 }
        lock.unlock()
        // Blocked threads first: waking one costs little, a call may encode a page.
        for waiting in company {
            if case .thread = waiting.delivery { waiting.deliver() }
        }
        if case .call = leader.delivery { leader.deliver() }
        for waiting in company {
            if case .call = waiting.delivery { waiting.deliver() }
        }
        return next
    }

    /// Gives `next` the turn: a blocked thread leads on its own; a call's
    /// turn goes to one of the batcher's threads.
    private func pass(_ next: Waiting) {
        if case .thread = next.delivery {
            next.deliver()
            return
        }
        lock.lock()
        guard !closed else {
            lock.unlock()
            lead(from: next)
            return
        }
        turns.append(next)
        let start = drivers < maximumRunning
        if start { drivers += 1 }
        lock.unlock()
        if start {
            let name = threadName
            Thread.detachNewThread { [self] in
                // Like the HTTP threads whose requests they answer: a
                // wake-up does not preempt (HTTPCore's ThreadScheduling).
                _ = csystem_schedule_this_thread_as_batch()
                _ = csystem_name_this_thread(name)
                drive()
            }
        }
        turnSignal.signal()
    }

    /// A batcher thread: takes a handed turn and leads while reads that
    /// are calls wait; exits once closed with no turn left.
    private func drive() {
        while true {
            turnSignal.wait()
            lock.lock()
            if turns.isEmpty {
                let exits = closed
                if exits { drivers -= 1 }
                lock.unlock()
                if exits { return }
                continue
            }
            let turn = turns.removeFirst()
            lock.unlock()
            lead(from: turn)
        }
    }

    /// Runs statements from `first`'s on, while the read with the next
    /// turn is a call; a blocked thread's turn goes to it.
    private func lead(from first: Waiting) {
        var turn: Waiting? = first
        while let leader = turn {
            turn = runStatement(leader)
            if let next = turn, case .thread = next.delivery {
                next.deliver()
                turn = nil
            }
        }
    }
}
