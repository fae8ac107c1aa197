import Dispatch
import Foundation
@testable import HistoryPostgres
import HistoryTestSupport
import Synchronization
import Testing

/// `ReadBatcher` on plain threads, with a statement that only records the
/// requests it was given: who goes together, in which order, and that
/// every read gets its own answer back.
@Suite struct ReadBatcherTests {
    private struct Refused: Error, Equatable {
        let batch: [Int]
    }

    /// Runs `read(request)` on a thread of its own; `group` tells when it answered.
    private func start(_ request: Int, _ group: DispatchGroup, _ body: @escaping @Sendable (Int) -> Void) {
        group.enter()
        Thread.detachNewThread {
            body(request)
            group.leave()
        }
    }

    private func waitUntil(_ condition: () -> Bool) {
        let deadline = Date().addingTimeInterval(10)
        while !condition() && Date() < deadline { usleep(1_000) }
    }

    /// One statement held open while five reads arrive: they wait, then go
    /// together in the next statement, and each finds its own request at
    /// its index. With `maximumBatch` 2 the five take three statements.
    @Test(.timeLimit(.minutes(1)), arguments: [16, 2])
    func readsAskedWhileTheStatementRunsGoTogetherInTheNext(maximumBatch: Int) throws {
        let batcher = ReadBatcher<Int, [Int], Refused>(maximumRunning: 1, maximumBatch: maximumBatch)
        let gate = DispatchSemaphore(value: 0)
        let batches = Locked<[[Int]]>([])
        let answers = Locked<[Int: Int]>([:])
        let group = DispatchGroup()
        let ask: @Sendable (Int) -> Void = { request in
            let outcome = batcher.read(request) { requests throws(Refused) in
                batches.withLock { $0.append(requests) }
                if requests == [0] { gate.wait() }
                return requests
            }
            if case .success(let (rows, index)) = outcome { answers.withLock { $0[request] = rows[index] } }
        }
        start(0, group, ask)
        waitUntil { batches.value.count == 1 }
        for request in 1...5 { start(request, group, ask) }
        waitUntil { batcher.waitingCount == 5 }
        #expect(batcher.waitingCount == 5)
        #expect(batches.value == [[0]])
        gate.signal()
        #expect(group.wait(timeout: .now() + 10) == .success)
        let later = Array(batches.value.dropFirst())
        #expect(later.map(\.count) == (maximumBatch == 16 ? [5] : [2, 2, 1]))
        #expect(later.flatMap { $0 }.sorted() == [1, 2, 3, 4, 5])
        #expect(answers.value == Dictionary(uniqueKeysWithValues: (0...5).map { ($0, $0) }))
        #expect(batcher.counts.statements == batches.value.count && batcher.counts.requests == 6)
    }

    /// A statement that fails fails every read it held, and only those: the
    /// reads of the next statement are answered.
    @Test(.timeLimit(.minutes(1)))
    func aFailedStatementFailsEveryReadItHeldAndNoOther() throws {
        let batcher = ReadBatcher<Int, [Int], Refused>(maximumRunning: 1, maximumBatch: 3)
        let gate = DispatchSemaphore(value: 0)
        let outcomes = Locked<[Int: Result<Int, Refused>]>([:])
        let started = Atomic(0)
        let group = DispatchGroup()
        let ask: @Sendable (Int) -> Void = { request in
            let outcome = batcher.read(request) { requests throws(Refused) in
                started.add(1, ordering: .relaxed)
                if requests == [0] { gate.wait() }
                if requests.contains(2) { throw Refused(batch: requests) }
                return requests
            }
            outcomes.withLock { $0[request] = outcome.map { $0.rows[$0.index] } }
        }
        start(0, group, ask)
        waitUntil { started.load(ordering: .relaxed) == 1 }
        for request in 1...5 {
            start(request, group, ask)
            waitUntil { batcher.waitingCount == request }
        }
        gate.signal()
        #expect(group.wait(timeout: .now() + 10) == .success)
        // FIFO with batches of 3: [0], [1, 2, 3], [4, 5].
        let failed = Refused(batch: [1, 2, 3])
        #expect(outcomes.value[0] == .success(0))
        for request in 1...3 { #expect(outcomes.value[request] == .failure(failed)) }
        for request in 4...5 { #expect(outcomes.value[request] == .success(request)) }
    }

    /// Sixteen threads reading as fast as they can: never more statements
    /// at once than allowed, and every read answered with its own request.
    @Test(.timeLimit(.minutes(1)))
    func neverMoreStatementsAtOnceThanAllowedAndEveryReadGetsItsOwn() throws {
        let batcher = ReadBatcher<Int, [Int], Refused>(maximumRunning: 2, maximumBatch: 8)
        let inFlight = Atomic(0)
        let mostInFlight = Atomic(0)
        let wrong = Atomic(0)
        let group = DispatchGroup()
        for thread in 0..<16 {
            start(thread, group) { thread in
                for number in 0..<300 {
                    let request = thread * 1_000 + number
                    let outcome = batcher.read(request) { requests throws(Refused) in
                        let now = inFlight.add(1, ordering: .relaxed).newValue
                        mostInFlight.max(now, ordering: .relaxed)
                        usleep(50)
                        inFlight.subtract(1, ordering: .relaxed)
                        return requests
                    }
                    guard case .success(let (rows, index)) = outcome, rows[index] == request else {
                        wrong.add(1, ordering: .relaxed)
                        continue
                    }
                }
            }
        }
        #expect(group.wait(timeout: .now() + 50) == .success)
        #expect(wrong.load(ordering: .relaxed) == 0)
        #expect(mostInFlight.load(ordering: .relaxed) <= 2)
        #expect(batcher.counts.requests == 16 * 300)
        #expect(batcher.waitingCount == 0)
    }
}
