import Foundation
import HistoryTestSupport
import Synchronization
import Testing
@testable import HistoryStore

/// A wait filtered to an id range (a long-poll with `min_id`/`max_id`) is
/// woken only by commits that changed a message in that range: appends
/// elsewhere leave it parked, an edit or delete of a message in range wakes it.
@Suite("Waits filtered by id range", .postgresCluster)
struct RangeFilteredWaitTests {
    @Test(arguments: StoreBackend.allCases) func appendsOutsideTheRangeLeaveItParkedAndAnEditInRangeWakesIt(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("c")
            let watched = try await store.post(1, to: "c")[0]
            // Parked through the handler API: see the delete test below.
            let outcomes = WaitOutcomes()
            _ = store.waitForChange(in: cid("c"), after: 1, ids: watched.id...watched.id,
                                    timeout: .seconds(600)) { outcomes.record($0) }
            #expect(store.parkedWaitCount == 1)
            // bulkLoad publishes before it returns: the wait has seen these commits.
            for _ in 0..<5 {
                try store.bulkLoad([NewMessage(sender: "bob", body: "elsewhere")], to: cid("c"))
            }
            #expect(store.parkedWaitCount == 1)
            _ = try await store.edit(messageID: watched.id, in: cid("c"), body: "changed")
            #expect(await eventually { outcomes.all == [.changed] })
            #expect(store.parkedWaitCount == 0)
        }
    }

    @Test(arguments: StoreBackend.allCases) func anAppendInTheRangeWakesIt(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("c")
            let first = try await store.post(1, to: "c")[0]
            async let outcome = store.waitForChange(in: cid("c"), after: 1, ids: (first.id + 1)...Int64.max,
                                                    timeout: .seconds(600))
            #expect(await eventually { store.parkedWaitCount == 1 })
            try await store.post(1, to: "c")
            #expect(await outcome == .changed)
        }
    }

    @Test(arguments: StoreBackend.allCases) func aDeleteInTheRangeWakesItAndAnUnfilteredWaitWakesForAnything(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("c")
            let watched = try await store.post(1, to: "c")[0]
            // Parked through the handler API, whose call returns only after
            // the wait's look at the current version: a commit after these
            // two calls can reach them only through `publish`, which applies
            // the id filter. (Parked from `async let`, the filtered wait's
            // look could come after the load below on a busy machine and
            // wake it by design: it cannot tell which messages changed.)
            let filtered = WaitOutcomes()
            let unfiltered = WaitOutcomes()
            _ = store.waitForChange(in: cid("c"), after: 1, ids: 1...watched.id, timeout: .seconds(600)) { filtered.record($0) }
            _ = store.waitForChange(in: cid("c"), after: 1, ids: nil, timeout: .seconds(600)) { unfiltered.record($0) }
            #expect(store.parkedWaitCount == 2)
            try store.bulkLoad([NewMessage(sender: "bob", body: "elsewhere")], to: cid("c"))
            #expect(await eventually { unfiltered.all == [.changed] })
            #expect(store.parkedWaitCount == 1)
            #expect(filtered.all.isEmpty)
            _ = try await store.delete(messageID: watched.id, in: cid("c"))
            #expect(await eventually { filtered.all == [.changed] })
        }
    }

    @Test func changedIDsFindAnOverlapByRange() {
        let changed = ChangedMessageIDs([9, 3, 4, 5, 20, 4])
        #expect(changed.ranges == [3...5, 9...9, 20...20])
        #expect(changed.intersects(5...8))
        #expect(!changed.intersects(6...8))
        #expect(changed.intersects(1...3))
        #expect(!changed.intersects(21...Int64.max))
        #expect(changed.intersects(10...Int64.max))
        #expect(!ChangedMessageIDs([]).intersects(1...Int64.max))
        #expect(ChangedMessageIDs(range: 100...200).intersects(200...300))
    }
}

/// The outcomes a handler-parked wait was delivered, in order.
private final class WaitOutcomes: Sendable {
    private let outcomes = Mutex<[WaitOutcome]>([])
    func record(_ outcome: WaitOutcome) { outcomes.withLock { $0.append(outcome) } }
    var all: [WaitOutcome] { outcomes.withLock { $0 } }
}
