import HistoryTestSupport
import Testing
@testable import HistoryStore

@Suite("Change feed", .postgresCluster)
struct ChangesTests {
    private func kinds(_ feed: ChangeFeed) -> [String] {
        feed.events.map { "\($0.message.body.isEmpty ? "-" : $0.message.body):\($0.kind.rawValue)@\($0.version)" }
    }

    @Test(arguments: StoreBackend.allCases) func eventsAreCompactedInTheOrderOfTheLastChange(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("c")
            let c = cid("c")
            let one = try await store.append(NewMessage(sender: "s", body: "one"), to: c).message      // v1
            let two = try await store.append(NewMessage(sender: "s", body: "two"), to: c).message      // v2
            _ = try await store.append(NewMessage(sender: "s", body: "three"), to: c)                  // v3
            _ = try await store.edit(messageID: one.id, in: c, body: "one!")                            // v4
            _ = try await store.delete(messageID: two.id, in: c)                                        // v5

            let all = try store.changes(in: c, ChangeQuery(since: 0))
            #expect(kinds(all) == ["three:created@3", "one!:created@4", "-:created@5"])
            #expect(!all.hasMore && all.version == 5)
            #expect(kinds(try store.changes(in: c, ChangeQuery(since: 2))) == ["three:created@3", "one!:edited@4", "-:deleted@5"])
            #expect(kinds(try store.changes(in: c, ChangeQuery(since: 3))) == ["one!:edited@4", "-:deleted@5"])
            #expect(kinds(try store.changes(in: c, ChangeQuery(since: 4))) == ["-:deleted@5"])
            let none = try store.changes(in: c, ChangeQuery(since: 5))
            #expect(none.events.isEmpty && !none.hasMore && none.version == 5)
        }
    }

    @Test(arguments: StoreBackend.allCases) func anEditedThenDeletedMessageIsOneDeletedEvent(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("c")
            let c = cid("c")
            let message = try await store.post(1, to: "c")[0]
            _ = try await store.edit(messageID: message.id, in: c, body: "edited")
            _ = try await store.delete(messageID: message.id, in: c)
            let feed = try store.changes(in: c, ChangeQuery(since: 1))
            #expect(feed.events.count == 1)
            #expect(feed.events[0].kind == .deleted)
            #expect(feed.events[0].message.deleted)
        }
    }

    @Test(arguments: StoreBackend.allCases) func hasMorePagesThroughEverythingOnce(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("c")
            let ids = try store.seed(25, to: "c")
            var since: Int64 = 0
            var seen: [Int64] = []
            var calls = 0
            while calls < 10 {
                calls += 1
                let feed = try store.changes(in: cid("c"), ChangeQuery(since: since, limit: 10))
                seen += feed.events.map(\.message.id)
                #expect(feed.events.allSatisfy { $0.kind == .created })
                if feed.hasMore {
                    #expect(feed.version == feed.events.last!.version)
                } else {
                    #expect(feed.version == 25)
                }
                since = feed.version
                if !feed.hasMore { break }
            }
            #expect(seen == ids)
            #expect(calls == 3)
        }
    }

    @Test(arguments: StoreBackend.allCases) func anExactlyFullLastPageHasNoMore(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("c")
            try store.seed(10, to: "c")
            let feed = try store.changes(in: cid("c"), ChangeQuery(since: 0, limit: 10))
            #expect(feed.events.count == 10 && !feed.hasMore && feed.version == 10)
        }
    }

    @Test(arguments: StoreBackend.allCases) func theIDRangeKeepsOnlyThatWindow(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("c")
            let ids = try store.seed(30, to: "c")
            for id in ids { _ = try await store.edit(messageID: id, in: cid("c"), body: "edited \(id)") }
            let window = try store.changes(in: cid("c"), ChangeQuery(since: 30, minID: ids[10], maxID: ids[14]))
            #expect(window.events.map(\.message.id) == Array(ids[10...14]))
            #expect(window.events.allSatisfy { $0.kind == .edited })
            #expect(window.version == 60)
            let above = try store.changes(in: cid("c"), ChangeQuery(since: 0, minID: ids[28]))
            #expect(above.events.map(\.message.id) == [ids[28], ids[29]])
            let below = try store.changes(in: cid("c"), ChangeQuery(since: 0, limit: 2, maxID: ids[5]))
            #expect(below.events.map(\.message.id) == [ids[0], ids[1]])
            #expect(below.hasMore)
            let one = try store.changes(in: cid("c"), ChangeQuery(since: 0, minID: ids[3], maxID: ids[3]))
            #expect(one.events.map(\.message.id) == [ids[3]])
        }
    }

    @Test(arguments: StoreBackend.allCases) func errors(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("c")
            try await store.post(2, to: "c")
            let c = cid("c")
            #expect(throws: StoreError.versionAhead(requested: 3, current: 2)) { try store.changes(in: c, ChangeQuery(since: 3)) }
            let cases: [(ChangeQuery, String)] = [
                (ChangeQuery(since: -1), "since"),
                (ChangeQuery(since: 0, limit: 0), "limit"),
                (ChangeQuery(since: 0, limit: 1001), "limit"),
                (ChangeQuery(since: 0, minID: 0), "min_id"),
                (ChangeQuery(since: 0, maxID: -2), "max_id"),
                (ChangeQuery(since: 0, minID: 9, maxID: 8), "min_id"),
            ]
            for (query, field) in cases {
                do {
                    _ = try store.changes(in: c, query)
                    Issue.record("accepted \(query)")
                } catch {
                    guard case .invalid(let reported, _)? = error as? StoreError else { Issue.record("wrong error \(error)"); continue }
                    #expect(reported.name == field)
                }
            }
            #expect(throws: StoreError.conversationNotFound(cid("x"))) { try store.changes(in: cid("x"), ChangeQuery(since: 0)) }
        }
    }
}
