import Foundation
import HistoryTestSupport
import Testing
@testable import HistoryStore

/// The anchor of a jump by time, at the store (docs/API.md, "Live"): the
/// smallest id created at or after T, however the conversation's ids are
/// spread (another conversation's messages in between, tombstones, a gap
/// at either end), checked against every message's own time for every
/// instant around them.
@Suite("Jump by time", .postgresCluster)
struct JumpByTimeTests {
    @Test(arguments: StoreBackend.allCases)
    func theAnchorIsTheSmallestIDCreatedAtOrAfterTheTime(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("a")
            try await store.make("b")
            // Runs of quick appends (many in one millisecond) a few
            // milliseconds apart, with "b" taking ids in between.
            for run in [1, 5, 2, 9, 1, 3, 7, 1, 4, 12] {
                try await store.post(run, to: "a")
                try await store.post(run % 3 + 1, to: "b")
                try await Task.sleep(for: .milliseconds(3))
            }
            let all = try store.page(of: cid("a"), PageQuery(cursor: .newest, limit: 200)).messages
            #expect(all.count == 45)
            for id in [all[0].id, all[7].id, all[all.count - 1].id] {
                _ = try await store.delete(messageID: id, in: cid("a"))
            }
            let messages = try store.page(of: cid("a"), PageQuery(cursor: .newest, limit: 200)).messages
            let times = messages.map(\.createdAt.millisecondsSinceEpoch)
            #expect(times == times.sorted(), "created times never decrease in id order")
            let instants = Set(times.flatMap { [$0 - 1, $0, $0 + 1] }).sorted()
            for instant in instants {
                let expected = messages.filter { $0.createdAt.millisecondsSinceEpoch >= instant }.map(\.id).min()
                let page = try store.page(of: cid("a"), PageQuery(cursor: .aroundTime(Timestamp(millisecondsSinceEpoch: instant)), limit: 5))
                if let expected {
                    #expect(page.anchor?.id == expected, "at \(instant)")
                    #expect(page.anchor?.found == true)
                    #expect(page.anchor?.index.map { page.messages[$0].id } == expected)
                } else {
                    #expect(page.anchor?.id == nil && page.anchor?.found == false, "at \(instant)")
                }
            }
            // An empty conversation has no anchor.
            try await store.make("empty")
            let empty = try store.page(of: cid("empty"), PageQuery(cursor: .aroundTime(Timestamp(millisecondsSinceEpoch: 0))))
            #expect(empty.anchor?.found == false && empty.messages.isEmpty)
        }
    }

    /// Hundreds of messages in one millisecond beside long quiet stretches
    /// and single messages: where guessing by time goes wrong (SQLite's
    /// search guesses where the time falls between the times it read, and
    /// halves the range when a guess did not), the anchor is still the
    /// smallest id at or after every instant.
    @Test(arguments: StoreBackend.allCases)
    func unevenTimesFindTheSameAnchor(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("a")
            try await store.make("b")
            for (burst, single, pause) in [(600, 1, 40), (0, 3, 5), (0, 1, 80), (300, 2, 2), (0, 20, 1), (150, 1, 30)] {
                if burst > 0 { try store.seed(burst, to: "a") }
                try await store.post(single, to: "a")
                try await store.post(2, to: "b")
                try await Task.sleep(for: .milliseconds(pause))
            }
            let ids = try store.allIDs(of: "a")
            #expect(ids.count == 1_078)
            var messages: [Message] = []
            var page = try store.page(of: cid("a"), PageQuery(cursor: .after(0), limit: 200))
            while true {
                messages += page.messages
                guard page.hasNewer, let last = page.messages.last else { break }
                page = try store.page(of: cid("a"), PageQuery(cursor: .after(last.id), limit: 200))
            }
            #expect(messages.map(\.id) == ids)
            let times = messages.map(\.createdAt.millisecondsSinceEpoch)
            #expect(times == times.sorted(), "created times never decrease in id order")
            let instants = Set(times.flatMap { [$0 - 1, $0, $0 + 1] } + [0, times[0] - 1_000, times[times.count - 1] + 1_000]).sorted()
            for instant in instants {
                let expected = messages.first { $0.createdAt.millisecondsSinceEpoch >= instant }?.id
                let page = try store.page(of: cid("a"), PageQuery(cursor: .aroundTime(Timestamp(millisecondsSinceEpoch: instant)), limit: 3))
                #expect(page.anchor?.id == expected, "at \(instant)")
                #expect(page.anchor?.found == (expected != nil), "at \(instant)")
            }
        }
    }

    /// Versions spent on edits leave SQLite's time marks (one message in
    /// 64 versions, migrations/0010_time_marks.sql) more than 256 versions
    /// apart: between those two marks the search halves the places instead
    /// of reading the messages in order; before the first mark and after
    /// the last it reads them. Every instant finds the smallest id at or
    /// after it, on both stores.
    @Test(arguments: StoreBackend.allCases)
    func marksFarApartFindTheSameAnchor(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("a")
            try await store.make("b")
            var posted: [Message] = []
            for _ in 0..<7 {
                posted += try await store.post(10, to: "a")
                try await store.post(1, to: "b")
                try await Task.sleep(for: .milliseconds(2))
            }
            for round in 0..<300 {
                _ = try await store.edit(messageID: posted[0].id, in: cid("a"), body: "edit \(round)")
            }
            for _ in 0..<4 {
                posted += try await store.post(5, to: "a")
                try await store.post(1, to: "b")
                try await Task.sleep(for: .milliseconds(2))
            }
            // Appended versions: one run up to 70, then none for 300.
            let versions = posted.map(\.version)
            #expect(zip(versions, versions.dropFirst()).contains { $1 - $0 > 256 })
            let messages = try store.page(of: cid("a"), PageQuery(cursor: .newest, limit: 200)).messages
            #expect(messages.map(\.id) == posted.map(\.id))
            let times = messages.map(\.createdAt.millisecondsSinceEpoch)
            let instants = Set(times.flatMap { [$0 - 1, $0, $0 + 1] }).sorted()
            for instant in instants {
                let expected = messages.first { $0.createdAt.millisecondsSinceEpoch >= instant }?.id
                let page = try store.page(of: cid("a"), PageQuery(cursor: .aroundTime(Timestamp(millisecondsSinceEpoch: instant)), limit: 3))
                #expect(page.anchor?.id == expected, "at \(instant)")
            }
        }
    }
}
