import Foundation
import HistoryTestSupport
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
            async let outcome = store.waitForChange(in: cid("c"), after: 1, ids: watched.id...watched.id,
                                                    timeout: .seconds(30))
            #expect(await eventually { store.parkedWaitCount == 1 })
            // bulkAppend publishes before it returns: the wait has seen these commits.
            for _ in 0..<5 {
                try store.bulkLoad([NewMessage(sender: "bob", body: "elsewhere")], to: cid("c"))
            }
            #expect(store.parkedWaitCount == 1)
            _ = try await store.edit(messageID: watched.id, in: cid("c"), body: "changed")
            #expect(await outcome == .changed)
            #expect(store.parkedWaitCount == 0)
        }
    }

    @Test(arguments: StoreBackend.allCases) func anAppendInTheRangeWakesIt(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("c")
            let first = try await store.post(1, to: "c")[0]
            async let outcome = store.waitForChange(in: cid("c"), after: 1, ids: (first.id + 1)...Int64.max,
                                                    timeout: .seconds(30))
            #expect(await eventually { store.parkedWaitCount == 1 })
            try await store.post(1, to: "c")
            #expect(await outcome == .changed)
        }
    }

    @Test(arguments: StoreBackend.allCases) func aDeleteInTheRangeWakesItAndAnUnfilteredWaitWakesForAnything(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("c")
            let watched = try await store.post(1, to: "c")[0]
            async let filtered = store.waitForChange(in: cid("c"), after: 1, ids: 1...watched.id, timeout: .seconds(30))
            async let unfiltered = store.waitForChange(in: cid("c"), after: 1, timeout: .seconds(30))
            #expect(await eventually { store.parkedWaitCount == 2 })
            try store.bulkLoad([NewMessage(sender: "bob", body: "elsewhere")], to: cid("c"))
            #expect(await unfiltered == .changed)
            #expect(store.parkedWaitCount == 1)
            _ = try await store.delete(messageID: watched.id, in: cid("c"))
            #expect(await filtered == .changed)
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
