import Foundation
import HistoryTestSupport
import Testing
@testable import HistoryStore
@testable import HistorySQLite

/// docs/API.md "Guarantees the tests must prove", 1 and 2, under real concurrency.
@Suite("Guarantees", .postgresCluster)
struct GuaranteeTests {
    @Test(arguments: StoreBackend.allCases) func walksInBothDirectionsSeeEveryMessageOnceWhileOthersPost(backend: StoreBackend) async throws {
        try await withTestStore(backend, durability: .full) { store in
            let c = cid("c")
            try await store.make("c")
            try store.seed(600, to: "c")
            let appenders = onBackgroundThread {
                onThreads(4) { thread in
                    for index in 0..<150 {
                        _ = store.appendBlocking(NewMessage(sender: "t\(thread)", body: "\(index)"), to: c)
                    }
                }
            }

            // Down from the newest page to the first message.
            var page = try store.page(of: c, PageQuery(limit: 7))
            let top = try #require(page.newestID)
            var downward = page.messages.map(\.id)
            var pages = 1
            while page.hasOlder, pages < 10_000 {
                page = try store.page(of: c, PageQuery(cursor: .before(page.oldestID!), limit: 7))
                downward = page.messages.map(\.id) + downward
                pages += 1
            }

            // Up from the first message to the newest.
            let first = try #require(downward.first)
            var upward = [first]
            page = try store.page(of: c, PageQuery(cursor: .after(first), limit: 11))
            upward += page.messages.map(\.id)
            pages = 1
            while page.hasNewer, pages < 10_000 {
                page = try store.page(of: c, PageQuery(cursor: .after(page.newestID!), limit: 11))
                upward += page.messages.map(\.id)
                pages += 1
            }
            await appenders.finished()

            let final = try store.allIDs(of: "c")
            #expect(final.count == 1200)
            // Exactly every message at or below the first page's top, once, ascending.
            #expect(downward == final.filter { $0 <= top })
            // Exactly every message up to where the walk reached the bottom.
            let reached = try #require(upward.last)
            #expect(reached >= top)
            #expect(upward == final.filter { $0 <= reached })
        }
    }

    @Test(arguments: StoreBackend.allCases) func aPollerNeverSeesALowerIDAppearLater(backend: StoreBackend) async throws {
        try await withTestStore(backend, durability: .full) { store in
            let c = cid("c")
            try await store.make("c")
            let finished = Locked(false)
            let appenders = onBackgroundThread {
                onThreads(8) { thread in
                    for index in 0..<60 {
                        _ = store.appendBlocking(NewMessage(sender: "t\(thread)", body: "\(index)"), to: c)
                    }
                }
                finished.withLock { $0 = true }
            }
            var seen = Set<Int64>()
            var highest: Int64 = 0
            var lateLowerIDs: [Int64] = []
            var polls = 0
            let deadline = Date().addingTimeInterval(60)
            while !finished.value, polls < 1_000_000, Date() < deadline {
                let ids = try store.page(of: c, PageQuery(limit: 20)).messages.map(\.id)
                polls += 1
                #expect(ids == ids.sorted())
                for id in ids where !seen.contains(id) {
                    if id < highest { lateLowerIDs.append(id) }
                    seen.insert(id)
                }
                highest = max(highest, ids.last ?? 0)
            }
            await appenders.finished()
            #expect(lateLowerIDs.isEmpty)
            #expect(!seen.isEmpty)
            #expect(try store.conversation(c).messageCount == 480)
        }
    }
}
