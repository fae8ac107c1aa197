import HistoryTestSupport
import Testing
@testable import HistoryStore
@testable import HistorySQLite

/// The contract's page rules written the plain way, over a sorted id list,
/// to check the store's keyset reads against.
private struct PageModel {
    let ids: [Int64]

    struct Expected: Equatable, CustomStringConvertible {
        var ids: [Int64]
        var hasOlder: Bool
        var hasNewer: Bool
        var anchorIndex: Int?? = nil
        var reset: Bool? = nil
        var description: String { "\(ids) older:\(hasOlder) newer:\(hasNewer) anchor:\(String(describing: anchorIndex)) reset:\(String(describing: reset))" }
    }

    func page(_ query: PageQuery) -> Expected {
        let limit = query.limit
        func edges(_ page: [Int64], emptyOlder: Bool, emptyNewer: Bool) -> Expected {
            guard let first = page.first, let last = page.last else {
                return Expected(ids: [], hasOlder: emptyOlder, hasNewer: emptyNewer)
            }
            return Expected(ids: page, hasOlder: ids.contains { $0 < first }, hasNewer: ids.contains { $0 > last })
        }
        switch query.cursor {
        case .newest:
            return edges(Array(ids.suffix(limit)), emptyOlder: false, emptyNewer: false)
        case .before(let before):
            return edges(Array(ids.filter { $0 < before }.suffix(limit)),
                         emptyOlder: false, emptyNewer: ids.contains { $0 >= before })
        case .after(let after):
            if let window = query.window, ids.filter({ $0 > after }).count > window {
                var expected = page(PageQuery(cursor: .newest, limit: limit))
                expected.reset = true
                return expected
            }
            var expected = edges(Array(ids.filter { $0 > after }.prefix(limit)),
                                 emptyOlder: ids.contains { $0 <= after }, emptyNewer: false)
            if query.window != nil { expected.reset = false }
            return expected
        case .between(let after, let before):
            let inside = ids.filter { $0 > after && $0 < before }
            return Expected(ids: Array(inside.prefix(limit)), hasOlder: false, hasNewer: inside.count > limit)
        case .around(let anchor):
            // A window of min(L, count) consecutive ids placed so that
            // floor(L/2) older ones precede the anchor's position, slid back
            // inside the list when one side runs out.
            let position = ids.firstIndex { $0 >= anchor } ?? ids.count
            let size = min(limit, ids.count)
            let start = max(0, min(position - limit / 2, ids.count - size))
            var expected = edges(Array(ids[start..<(start + size)]), emptyOlder: false, emptyNewer: false)
            expected.anchorIndex = .some(ids.contains(anchor) ? position - start : nil)
            return expected
        case .aroundTime:
            // The model knows ids, not times: jumps by time are checked
            // against `around` pages over HTTP (JumpByTimeAPITests).
            preconditionFailure("PageModel has no creation times")
        }
    }
}

private func observed(_ page: Page) -> PageModel.Expected {
    PageModel.Expected(ids: page.messages.map(\.id), hasOlder: page.hasOlder, hasNewer: page.hasNewer,
                       anchorIndex: page.anchor.map { $0.index }, reset: page.reset)
}

@Suite("Pages", .postgresCluster)
struct PageTests {
    /// "a" gets ids with gaps (messages of "b" in between) and tombstones.
    private func seedWithGaps(_ store: any HistoryStore) async throws -> [Int64] {
        try await store.make("a")
        try await store.make("b")
        var ids: [Int64] = []
        for chunk in [7, 1, 30, 2, 55, 13, 1, 40] {
            ids += try store.seed(chunk, to: "a")
            try store.seed(chunk % 5 + 1, to: "b")
        }
        for id in [ids[0], ids[10], ids[ids.count - 1]] {
            _ = try await store.delete(messageID: id, in: cid("a"))
        }
        return ids
    }

    @Test(arguments: StoreBackend.allCases) func everyCursorMatchesTheModel(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            let ids = try await seedWithGaps(store)
            let model = PageModel(ids: ids)
            let gapID = ids[7] + 1 // a message of "b": not in "a"
            #expect(!ids.contains(gapID))
            let positions: [Int64] = [1, ids[0] - 1, ids[0], ids[1], ids[5], gapID, ids[40], ids[ids.count / 2],
                                      ids[ids.count - 2], ids[ids.count - 1], ids[ids.count - 1] + 1,
                                      ids[ids.count - 1] + 500, Int64.max].filter { $0 >= 1 }
            var checked = 0
            for limit in [1, 2, 3, 7, 50, 200] {
                var queries = [PageQuery(cursor: .newest, limit: limit)]
                for position in positions {
                    queries.append(PageQuery(cursor: .before(position), limit: limit))
                    queries.append(PageQuery(cursor: .after(position), limit: limit))
                    queries.append(PageQuery(cursor: .around(position), limit: limit))
                    for window in [1, 10, 100, 10_000] {
                        queries.append(PageQuery(cursor: .after(position), limit: limit, window: window))
                    }
                    for other in [ids[3], gapID, ids[60], Int64.max] {
                        queries.append(PageQuery(cursor: .between(after: position, before: other), limit: limit))
                    }
                }
                for query in queries {
                    let page = try store.page(of: cid("a"), query)
                    #expect(observed(page) == model.page(query), "\(query)")
                    let current = try store.conversation(cid("a")).version
                    #expect(page.version == current)
                    checked += 1
                }
            }
            #expect(checked > 500)
        }
    }

    @Test(arguments: StoreBackend.allCases) func anEmptyConversation(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("empty")
            for cursor in [PageCursor.newest, .before(10), .after(10), .between(after: 1, before: 10), .around(5)] {
                let page = try store.page(of: cid("empty"), PageQuery(cursor: cursor, limit: 10))
                #expect(page.messages.isEmpty)
                #expect(!page.hasOlder && !page.hasNewer)
                #expect(page.oldestID == nil && page.newestID == nil)
                #expect(page.version == 0)
            }
            let around = try store.page(of: cid("empty"), PageQuery(cursor: .around(5)))
            #expect(around.anchor == Page.Anchor(id: 5, found: false, index: nil))
            let windowed = try store.page(of: cid("empty"), PageQuery(cursor: .after(3), window: 5))
            #expect(windowed.reset == false)
        }
    }

    @Test(arguments: StoreBackend.allCases) func newestAndBeforeWalkDownFromTheBottom(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("c")
            let ids = try store.seed(120, to: "c")
            let newest = try store.page(of: cid("c"), PageQuery())
            #expect(newest.messages.map(\.id) == Array(ids.suffix(50)))
            #expect(newest.hasOlder && !newest.hasNewer)
            #expect(newest.anchor == nil && newest.reset == nil)
            let older = try store.page(of: cid("c"), PageQuery(cursor: .before(newest.oldestID!)))
            #expect(older.messages.map(\.id) == Array(ids[20..<70]))
            #expect(older.hasOlder && older.hasNewer)
            let first = try store.page(of: cid("c"), PageQuery(cursor: .before(older.oldestID!)))
            #expect(first.messages.map(\.id) == Array(ids[0..<20]))
            #expect(!first.hasOlder && first.hasNewer)
            let belowFirst = try store.page(of: cid("c"), PageQuery(cursor: .before(ids[0])))
            #expect(belowFirst.messages.isEmpty && !belowFirst.hasOlder && belowFirst.hasNewer)
        }
    }

    @Test(arguments: StoreBackend.allCases) func aroundKeepsHalfTheLimitOlder(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("c")
            let ids = try store.seed(40, to: "c")
            let even = try store.page(of: cid("c"), PageQuery(cursor: .around(ids[20]), limit: 10))
            #expect(even.messages.map(\.id) == Array(ids[15..<25]))
            #expect(even.anchor == Page.Anchor(id: ids[20], found: true, index: 5))
            let odd = try store.page(of: cid("c"), PageQuery(cursor: .around(ids[20]), limit: 11))
            #expect(odd.messages.map(\.id) == Array(ids[15..<26]))
            #expect(odd.anchor?.index == 5)
            let nearTop = try store.page(of: cid("c"), PageQuery(cursor: .around(ids[1]), limit: 10))
            #expect(nearTop.messages.map(\.id) == Array(ids[0..<10]))
            #expect(nearTop.anchor?.index == 1)
            #expect(!nearTop.hasOlder && nearTop.hasNewer)
            let nearBottom = try store.page(of: cid("c"), PageQuery(cursor: .around(ids[39]), limit: 10))
            #expect(nearBottom.messages.map(\.id) == Array(ids[30..<40]))
            #expect(nearBottom.anchor?.index == 9)
            let one = try store.page(of: cid("c"), PageQuery(cursor: .around(ids[20]), limit: 1))
            #expect(one.messages.map(\.id) == [ids[20]])
            #expect(one.anchor?.index == 0)
            let missing = try store.page(of: cid("c"), PageQuery(cursor: .around(ids[39] + 100), limit: 4))
            #expect(missing.messages.map(\.id) == Array(ids[36..<40]))
            #expect(missing.anchor == Page.Anchor(id: ids[39] + 100, found: false, index: nil))
        }
    }

    @Test(arguments: StoreBackend.allCases) func windowResetsOnlyWhenTooFarBehind(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("c")
            let ids = try store.seed(100, to: "c")
            let near = try store.page(of: cid("c"), PageQuery(cursor: .after(ids[94]), limit: 50, window: 10))
            #expect(near.reset == false)
            #expect(near.messages.map(\.id) == Array(ids[95..<100]))
            let exactlyWindow = try store.page(of: cid("c"), PageQuery(cursor: .after(ids[89]), limit: 5, window: 10))
            #expect(exactlyWindow.reset == false)
            #expect(exactlyWindow.messages.map(\.id) == Array(ids[90..<95]))
            #expect(exactlyWindow.hasOlder && exactlyWindow.hasNewer)
            let far = try store.page(of: cid("c"), PageQuery(cursor: .after(ids[88]), limit: 5, window: 10))
            #expect(far.reset == true)
            #expect(far.messages.map(\.id) == Array(ids[95..<100]))
            #expect(far.hasOlder && !far.hasNewer)
        }
    }

    @Test(arguments: StoreBackend.allCases) func invalidQueriesNameTheirField(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("c")
            let cases: [(PageQuery, String)] = [
                (PageQuery(limit: 0), "limit"),
                (PageQuery(limit: 201), "limit"),
                (PageQuery(cursor: .before(-1)), "before"),
                (PageQuery(cursor: .after(-1)), "after"),
                (PageQuery(cursor: .around(-3)), "around"),
                (PageQuery(cursor: .between(after: -1, before: 5)), "after"),
                (PageQuery(cursor: .between(after: 5, before: -5)), "before"),
                (PageQuery(cursor: .newest, window: 5), "window"),
                (PageQuery(cursor: .before(5), window: 5), "window"),
                (PageQuery(cursor: .around(5), window: 5), "window"),
                (PageQuery(cursor: .between(after: 1, before: 9), window: 5), "window"),
                (PageQuery(cursor: .after(5), window: 0), "window"),
                (PageQuery(cursor: .after(5), window: 10_001), "window"),
            ]
            for (query, field) in cases {
                do {
                    _ = try store.page(of: cid("c"), query)
                    Issue.record("accepted \(query)")
                } catch {
                    guard case .invalid(let reported, _)? = error as? StoreError else { Issue.record("wrong error \(error)"); continue }
                    #expect(reported.name == field, "\(query)")
                }
            }
            #expect(throws: StoreError.conversationNotFound(cid("nope"))) { try store.page(of: cid("nope"), PageQuery()) }
        }
    }

    @Test func aDeepPageIsAKeysetRead() async throws {
        try await withTemporaryStore { store in
            try await store.make("c")
            try store.seed(10, to: "c")
            // The page queries must seek on the rowid (place), never scan or sort.
            for order in ["DESC", "ASC"] {
                let plan = try queryStrings(store.configuration.path, """
                    EXPLAIN QUERY PLAN SELECT id FROM messages WHERE place > 68719476736 AND place < 68719476741
                    ORDER BY place \(order) LIMIT 50
                    """, column: 3)
                #expect(plan.contains { $0.contains("SEARCH messages USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)") },
                        "\(plan)")
                #expect(!plan.contains { $0.contains("TEMP B-TREE") }, "\(plan)")
            }
            let feedPlan = try queryStrings(store.configuration.path, """
                EXPLAIN QUERY PLAN SELECT id FROM messages
                WHERE conversation_seq = 1 AND version > 3 AND +id >= 1 AND +id <= 9 ORDER BY version LIMIT 10
                """, column: 3)
            #expect(feedPlan.contains { $0.contains("messages_by_version") }, "\(feedPlan)")
            #expect(!feedPlan.contains { $0.contains("TEMP B-TREE") }, "\(feedPlan)")
        }
    }
}
