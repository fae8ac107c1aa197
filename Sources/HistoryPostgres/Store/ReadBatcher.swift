import Dispatch
import Foundation
import Synchronization

/// Gathers the reads asked at the same time into one statement each (for
/// pages: `PostgresPageBatch`), like a group commit for reads: at most
/// `maximumRunning` statements run at once, and a read asked while they
/// all run waits for the next one, which reads it together with every
/// read that arrived meanwhile, up to `maximumBatch`.
///
/// Leader and followers, no thread of its own: the thread whose read finds
/// a statement free runs it (its own request first, then the oldest
/// waiting), and when it is done hands the turn to the oldest read still
/// waiting, so no read waits for more than the statements ahead of it and
/// no request changes threads. A lone read runs at once, alone, with no
/// added wait: company is taken when it is there, never waited for (as
/// SQLite's group commit, docs/performance.md "Group commit without
/// waiting for company"). Each follower gets the shared rows and its
/// index in them, and decodes its own answer on its own thread.
///
/// The use of `@unchecked Sendable` is safe for this type because `queue`
/// and `running` are read and written only while `lock` is held, and a
/// waiting read's `outcome` is set under that lock before its semaphore is
/// signalled, which orders it before its thread reads it.
final class ReadBatcher<Request: Sendable, Rows: Sendable, Failure: Error>: @unchecked Sendable {
    typealias Outcome = Result<(rows: Rows, index: Int), Failure>

    let maximumRunning: Int
    let maximumBatch: Int

    private final class Waiting {
        let request: Request
        /// Set before `woken` is signalled; nil then hands this read the turn.
        var outcome: Outcome?
        let woken = DispatchSemaphore(value: 0)

        init(_ request: Request) {
            self.request = request
        }
    }

    private let lock = NSLock()
    private var queue: [Waiting] = []
    private var running = 0
    private let statementCount = Atomic(0)
    private let requestCount = Atomic(0)

    init(maximumRunning: Int, maximumBatch: Int) {
        self.maximumRunning = max(1, maximumRunning)
        self.maximumBatch = max(1, maximumBatch)
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

    /// Reads `request` with whatever reads wait beside it; `read` runs one
    /// statement for the requests it is given, in that order (on the
    /// caller's thread, or on another read's).
    func read(_ request: Request, _ read: ([Request]) throws(Failure) -> Rows) -> Outcome {
        let own = Waiting(request)
        lock.lock()
        let leadsNow = running < maximumRunning
        if leadsNow { running += 1 } else { queue.append(own) }
        lock.unlock()
        if !leadsNow {
            own.woken.wait()
            if let outcome = own.outcome { return outcome }
            // Handed the turn: `own` was taken off the queue for it.
        }
        lock.lock()
        let company = Array(queue.prefix(maximumBatch - 1))
        queue.removeFirst(company.count)
        lock.unlock()
        let batch = [own] + company
        let rows = Result { () throws(Failure) in try read(batch.map(\.request)) }
        statementCount.add(1, ordering: .relaxed)
        requestCount.add(batch.count, ordering: .relaxed)
        lock.lock()
        for (index, waiting) in batch.enumerated().dropFirst() {
            waiting.outcome = rows.map { ($0, index) }
        }
        let next = queue.isEmpty ? nil : queue.removeFirst()
        if next == nil { running -= 1 }
        lock.unlock()
        for waiting in company { waiting.woken.signal() }
        next?.woken.signal()
        return rows.map { ($0, 0) }
    }
}
