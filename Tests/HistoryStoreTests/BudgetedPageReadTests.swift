import HistoryTestSupport
import Testing
@testable import HistoryStore

/// A page that reads away from its cursor stops once the text it read is
/// over the response budget (`PageQuery.byteBudget`): what the answer's trim
/// could never keep is not read, and what is kept and the flags are exact.
@Suite struct BudgetedPageReadTests {
    /// 16 KiB bodies from "ana": 16,387 bytes of text a row.
    private static let rowText = 16_384 + 3
    private static let budget = 100_000

    private func large(_ store: any HistoryStore, _ count: Int) throws -> [Int64] {
        let body = String(repeating: "x", count: 16_384)
        let ids = try store.bulkLoad((0..<count).map { _ in NewMessage(sender: "ana", body: body) }, to: cid("big"))
        return Array(try #require(ids))
    }

    @Test func newestBeforeAndAfterStopAtTheFirstRowPastTheBudget() async throws {
        try await withTestStore(.sqlite) { store in
            try await store.make("big")
            let ids = try large(store, 60)
            // 6 rows are 98,322 bytes, 7 pass 100,000: the 7th is the last read.
            let read = (Self.budget + Self.rowText - 1) / Self.rowText
            #expect(read == 7)

            var newest = PageQuery(cursor: .newest, limit: 50)
            newest.byteBudget = Self.budget
            let top = try store.page(of: cid("big"), newest)
            #expect(top.messages.map(\.id) == Array(ids.suffix(read)))
            #expect(top.hasOlder && !top.hasNewer)

            var before = PageQuery(cursor: .before(ids[30]), limit: 50)
            before.byteBudget = Self.budget
            let up = try store.page(of: cid("big"), before)
            #expect(up.messages.map(\.id) == Array(ids[(30 - read)..<30]))
            #expect(up.hasOlder && up.hasNewer)

            var after = PageQuery(cursor: .after(ids[10]), limit: 50)
            after.byteBudget = Self.budget
            let down = try store.page(of: cid("big"), after)
            #expect(down.messages.map(\.id) == Array(ids[11..<(11 + read)]))
            #expect(down.hasOlder && down.hasNewer)

            // Without a budget, the whole limit.
            #expect(try store.page(of: cid("big"), PageQuery(cursor: .newest, limit: 50)).messages.count == 50)
        }
    }

    @Test func smallMessagesAreReadToTheLimitAndAroundAndBetweenIgnoreTheBudget() async throws {
        try await withTestStore(.sqlite) { store in
            try await store.make("big")
            let ids = try large(store, 60)
            try await store.make("small")
            try await store.post(30, to: "small")
            var small = PageQuery(cursor: .newest, limit: 20)
            small.byteBudget = Self.budget
            #expect(try store.page(of: cid("small"), small).messages.count == 20)

            // Their splits and flags depend on what each side holds: read whole.
            var around = PageQuery(cursor: .around(ids[30]), limit: 40)
            around.byteBudget = Self.budget
            #expect(try store.page(of: cid("big"), around).messages.count == 40)
            var between = PageQuery(cursor: .between(after: ids[0], before: ids[50]), limit: 30)
            between.byteBudget = Self.budget
            let gap = try store.page(of: cid("big"), between)
            #expect(gap.messages.count == 30 && gap.hasNewer)
        }
    }
}
