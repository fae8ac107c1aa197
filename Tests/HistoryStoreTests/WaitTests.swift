import Dispatch
import Foundation
import HistoryTestSupport
import Testing
@testable import HistoryStore

@Suite("Waiting for changes", .postgresCluster)
struct WaitTests {
    @Test(arguments: StoreBackend.allCases) func anAlreadyNewerVersionAnswersAtOnce(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("c")
            try await store.post(2, to: "c")
            #expect(await store.waitForChange(in: cid("c"), after: 1, timeout: .seconds(600)) == .changed)
            #expect(store.parkedWaitCount == 0)
        }
    }

    @Test(arguments: StoreBackend.allCases) func aCommitWakesTheWait(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("c")
            try await store.post(1, to: "c")
            async let outcome = store.waitForChange(in: cid("c"), after: 1, timeout: .seconds(600))
            #expect(await eventually { store.parkedWaitCount == 1 })
            try await store.post(1, to: "c")
            #expect(await outcome == .changed)
            #expect(store.parkedWaitCount == 0)
        }
    }

    @Test(arguments: StoreBackend.allCases) func editsAndDeletesWakeToo(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("c")
            let message = try await store.post(1, to: "c")[0]
            async let edited = store.waitForChange(in: cid("c"), after: 1, timeout: .seconds(600))
            #expect(await eventually { store.parkedWaitCount == 1 })
            _ = try await store.edit(messageID: message.id, in: cid("c"), body: "new")
            #expect(await edited == .changed)
            async let deleted = store.waitForChange(in: cid("c"), after: 2, timeout: .seconds(600))
            #expect(await eventually { store.parkedWaitCount == 1 })
            _ = try await store.delete(messageID: message.id, in: cid("c"))
            #expect(await deleted == .changed)
        }
    }

    @Test(arguments: StoreBackend.allCases) func anotherConversationDoesNotWakeIt(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("quiet")
            try await store.make("busy")
            // Long enough to be seen parked on a busy machine.
            async let outcome = store.waitForChange(in: cid("quiet"), after: 0, timeout: .seconds(3))
            #expect(await eventually { store.parkedWaitCount == 1 })
            try await store.post(3, to: "busy")
            #expect(await outcome == .timedOut)
        }
    }

    @Test(arguments: StoreBackend.allCases) func aWaitTimesOut(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("c")
            #expect(await store.waitForChange(in: cid("c"), after: 0, timeout: .milliseconds(50)) == .timedOut)
            #expect(await store.waitForChange(in: cid("c"), after: 0, timeout: .zero) == .timedOut)
            #expect(store.parkedWaitCount == 0)
        }
    }

    @Test(arguments: StoreBackend.allCases) func aWaitCanBeCancelled(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("c")
            let outcomes = Locked<[WaitOutcome]>([])
            let token = store.waitForChange(in: cid("c"), after: 0, timeout: .seconds(600)) { outcome in
                outcomes.withLock { $0.append(outcome) }
            }
            #expect(store.parkedWaitCount == 1)
            store.cancelWait(token)
            #expect(await eventually { outcomes.value == [.cancelled] })
            #expect(store.parkedWaitCount == 0)
            // Later events do not call the handler a second time.
            store.cancelWait(token)
            try await store.post(1, to: "c")
            try await Task.sleep(for: .milliseconds(20))
            #expect(outcomes.value == [.cancelled])
        }
    }

    @Test(arguments: StoreBackend.allCases) func closingAnswersParkedWaitsAndLaterOnes(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("c")
            let outcomes = Locked<[WaitOutcome]>([])
            for _ in 0..<3 {
                _ = store.waitForChange(in: cid("c"), after: 0, timeout: .seconds(600)) { outcome in
                    outcomes.withLock { $0.append(outcome) }
                }
            }
            store.close()
            #expect(outcomes.value == [.closing, .closing, .closing])
            #expect(await store.waitForChange(in: cid("c"), after: 0, timeout: .seconds(600)) == .closing)
        }
    }

    @Test(arguments: StoreBackend.allCases) func tenThousandParkedWaitsAreWokenByOneCommit(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("c")
            let woken = Locked(0)
            var tokens: [WaitToken] = []
            for _ in 0..<10_000 {
                tokens.append(store.waitForChange(in: cid("c"), after: 0, timeout: .seconds(600)) { outcome in
                    if outcome == .changed { woken.withLock { $0 += 1 } }
                })
            }
            #expect(Set(tokens).count == 10_000)
            #expect(store.parkedWaitCount == 10_000)
            try await store.post(1, to: "c")
            #expect(await eventually { woken.value == 10_000 })
            #expect(store.parkedWaitCount == 0)
        }
    }

    @Test func noCommitIsMissedBetweenRegisteringAndLooking() async throws {
        // Waits registered while commits stream in must all end as changed:
        // each asks for a version that a later commit will pass.
        try await withTemporaryStore { store in
            try await store.make("c")
            let timedOut = Locked(0)
            let answered = Locked(0)
            let appender = onBackgroundThread {
                for index in 0..<200 {
                    _ = store.appendBlocking(NewMessage(sender: "s", body: "\(index)"), to: cid("c"))
                }
            }
            for _ in 0..<200 {
                let version = try store.conversation(cid("c")).version
                guard version < 199 else { break }
                _ = store.waitForChange(in: cid("c"), after: version, timeout: .seconds(600)) { outcome in
                    answered.withLock { $0 += 1 }
                    if outcome != .changed { timedOut.withLock { $0 += 1 } }
                }
            }
            await appender.finished()
            #expect(await eventually { store.parkedWaitCount == 0 })
            #expect(timedOut.value == 0)
            #expect(answered.value > 0)
        }
    }
}
