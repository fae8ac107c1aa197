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

    /// The kernel's name of this thread.
    private func threadName() -> String {
        let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
        return name.trimmingCharacters(in: .whitespacesAndNewlines)
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

    /// Reads asked as calls while a statement runs: each caller returns at
    /// once, holding no thread; the five go together in the next
    /// statement, which one of the batcher's own threads runs (not a
    /// caller's), and each call gets its own request's rows, on that thread.
    @Test(.timeLimit(.minutes(1)))
    func callsAskedWhileTheStatementRunsReturnAtOnceAndAreAnsweredByTheNextStatementsThread() throws {
        let batcher = ReadBatcher<Int, [Int], Refused>(maximumRunning: 1, maximumBatch: 16, threadName: "rb-calls-test")
        defer { batcher.close() }
        let gate = DispatchSemaphore(value: 0)
        let batches = Locked<[[Int]]>([])
        let statementThreads = Locked<[String]>([])
        let answers = Locked<[Int: (value: Int, thread: String)]>([:])
        let answered = DispatchGroup()
        let statement: ReadBatcher<Int, [Int], Refused>.Statement = { requests throws(Refused) in
            batches.withLock { $0.append(requests) }
            statementThreads.withLock { $0.append(threadName()) }
            if requests == [0] { gate.wait() }
            return requests
        }
        let blocked = DispatchGroup()
        start(0, blocked) { request in _ = batcher.read(request, statement) }
        waitUntil { batches.value.count == 1 }
        for request in 1...5 {
            answered.enter()
            // Returns before the statement that reads it: the first still holds the place.
            batcher.read(request, statement) { outcome in
                if case .success(let (rows, index)) = outcome {
                    answers.withLock { $0[request] = (rows[index], threadName()) }
                }
                answered.leave()
            }
        }
        #expect(batcher.waitingCount == 5)
        gate.signal()
        #expect(answered.wait(timeout: .now() + 10) == .success)
        #expect(blocked.wait(timeout: .now() + 10) == .success)
        #expect(batches.value == [[0], [1, 2, 3, 4, 5]])
        #expect(statementThreads.value.last == "rb-calls-test")
        #expect(answers.value.mapValues(\.value) == Dictionary(uniqueKeysWithValues: (1...5).map { ($0, $0) }))
        #expect(Set(answers.value.values.map(\.thread)) == ["rb-calls-test"])
        #expect(batcher.counts.statements == 2 && batcher.counts.requests == 6)
    }

    /// A call that finds the statement's place free is answered on its
    /// caller's thread before `read` returns: a lone read waits for nothing.
    @Test(.timeLimit(.minutes(1)))
    func aLoneCallIsAnsweredOnItsCallersThreadBeforeReadReturns() throws {
        let batcher = ReadBatcher<Int, [Int], Refused>(maximumRunning: 1, maximumBatch: 16)
        defer { batcher.close() }
        let caller = pthread_self()
        let answer = Locked<(value: Int, sameThread: Bool)?>(nil)
        batcher.read(7, { requests throws(Refused) in requests }) { outcome in
            if case .success(let (rows, index)) = outcome { answer.withLock { $0 = (rows[index], pthread_equal(pthread_self(), caller) != 0) } }
        }
        #expect(answer.value?.value == 7)
        #expect(answer.value?.sameThread == true)
    }

    /// Blocking reads and calls mixed, from sixteen threads as fast as they
    /// can: never more statements at once than allowed, every read
    /// answered once with its own request, failures included; after
    /// `close`, the batcher's threads are gone.
    @Test(.timeLimit(.minutes(1)))
    func blockingReadsAndCallsMixedAreEachAnsweredOnceWithTheirOwn() throws {
        let batcher = ReadBatcher<Int, [Int], Refused>(maximumRunning: 2, maximumBatch: 8, threadName: "rb-mixed-test")
        let inFlight = Atomic(0)
        let mostInFlight = Atomic(0)
        let wrong = Atomic(0)
        let answeredCalls = Atomic(0)
        let failed = Atomic(0)
        let calls = DispatchGroup()
        let statement: ReadBatcher<Int, [Int], Refused>.Statement = { requests throws(Refused) in
            let now = inFlight.add(1, ordering: .relaxed).newValue
            mostInFlight.max(now, ordering: .relaxed)
            usleep(50)
            inFlight.subtract(1, ordering: .relaxed)
            // One statement in about fifty fails, with every read it holds.
            if requests.contains(where: { $0 % 997 == 0 }) { throw Refused(batch: requests) }
            return requests
        }
        let check: @Sendable (Int, ReadBatcher<Int, [Int], Refused>.Outcome) -> Void = { request, outcome in
            switch outcome {
            case .success(let (rows, index)): if rows[index] != request { wrong.add(1, ordering: .relaxed) }
            case .failure(let refused):
                failed.add(1, ordering: .relaxed)
                if !refused.batch.contains(request) { wrong.add(1, ordering: .relaxed) }
            }
        }
        let group = DispatchGroup()
        for thread in 0..<16 {
            start(thread, group) { thread in
                for number in 0..<300 {
                    let request = thread * 1_000 + number
                    if number % 2 == 0 {
                        check(request, batcher.read(request, statement))
                    } else {
                        calls.enter()
                        batcher.read(request, statement) { outcome in
                            check(request, outcome)
                            answeredCalls.add(1, ordering: .relaxed)
                            calls.leave()
                        }
                    }
                }
            }
        }
        #expect(group.wait(timeout: .now() + 50) == .success)
        #expect(calls.wait(timeout: .now() + 50) == .success)
        #expect(wrong.load(ordering: .relaxed) == 0)
        #expect(failed.load(ordering: .relaxed) > 0)
        #expect(answeredCalls.load(ordering: .relaxed) == 16 * 150)
        #expect(mostInFlight.load(ordering: .relaxed) <= 2)
        #expect(batcher.counts.requests == 16 * 300)
        #expect(batcher.waitingCount == 0)
        #expect(!ProcessThreads.ids(namedWithPrefix: "rb-mixed-test").isEmpty)
        batcher.close()
        waitUntil { ProcessThreads.ids(namedWithPrefix: "rb-mixed-test").isEmpty }
        #expect(ProcessThreads.ids(namedWithPrefix: "rb-mixed-test").isEmpty)
    }
}
