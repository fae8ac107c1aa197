import Foundation
import HTTPCore
import HistoryAPI
import HistoryClient
import HistoryStore
import HistoryTestSupport
import Testing

@Suite("API: pages")
struct PageAPITests {
    /// A conversation "c" of `count` messages; returns their ids ascending.
    private func seed(_ client: HTTPClientConnection, count: Int) throws -> [Int64] {
        try client.createConversation("c")
        // Another conversation's messages interleave the global ids.
        try client.createConversation("other")
        var ids: [Int64] = []
        for index in 0..<count {
            ids.append(try client.appendMessage("c", body: "m\(index)"))
            if index % 3 == 0 { try client.appendMessage("other") }
        }
        return ids
    }

    /// A page of "c" decoded, with its members as written (to tell a
    /// `null` member from an absent one).
    private func page(_ client: HTTPClientConnection, _ query: String)
        throws -> (ids: [Int64], page: HistoryPage, members: JSONTree) {
        let response = try client.get("/v1/conversations/c/messages\(query)")
        #expect(response.status == 200, "\(query): \(response.bodyText)")
        let page = try response.decode(HistoryPage.self)
        return (page.messages.map(\.id), page, try response.decode(JSONTree.self))
    }

    @Test func newestBeforeAfterAndBetween() throws {
        try withRunningServer { client in
            let ids = try seed(client, count: 30)
            let newest = try page(client, "?limit=10")
            #expect(newest.ids == Array(ids[20...]))
            #expect(newest.page.hasOlder == true)
            #expect(newest.page.hasNewer == false)
            #expect(newest.page.oldestID == ids[20])
            #expect(newest.page.newestID == ids[29])
            #expect(newest.page.version == 30)
            #expect(newest.members["anchor"] == nil && newest.members["reset"] == nil)

            let before = try page(client, "?limit=10&before=\(ids[20])")
            #expect(before.ids == Array(ids[10..<20]))
            #expect(before.page.hasOlder == true)
            #expect(before.page.hasNewer == true)

            let bottom = try page(client, "?before=\(ids[3])")
            #expect(bottom.ids == Array(ids[0..<3]))
            #expect(bottom.page.hasOlder == false)

            let after = try page(client, "?limit=5&after=\(ids[24])")
            #expect(after.ids == Array(ids[25...]))
            #expect(after.page.hasNewer == false)
            #expect(after.page.hasOlder == true)

            let between = try page(client, "?limit=3&after=\(ids[4])&before=\(ids[12])")
            #expect(between.ids == Array(ids[5..<8]))
            #expect(between.page.hasOlder == false)
            #expect(between.page.hasNewer == true)

            let defaultLimit = try page(client, "")
            #expect(defaultLimit.ids == ids)
            #expect(defaultLimit.page.hasOlder == false)

            let empty = try page(client, "?before=\(ids[0])")
            #expect(empty.ids.isEmpty)
            #expect(empty.members["oldest_id"] == .null)
            #expect(empty.members["newest_id"] == .null)
        }
    }

    /// 0 is a position below every message: `after=0` is the first page of
    /// a walk up from the top, `before=0` is empty with everything newer.
    @Test func zeroIsThePositionBelowEveryMessage() throws {
        try withRunningServer { client in
            let ids = try seed(client, count: 12)
            let first = try page(client, "?limit=5&after=0")
            #expect(first.ids == Array(ids[..<5]))
            #expect(first.page.hasOlder == false)
            #expect(first.page.hasNewer == true)

            let empty = try page(client, "?limit=5&before=0")
            #expect(empty.ids.isEmpty)
            #expect(empty.members["oldest_id"] == .null && empty.members["newest_id"] == .null)
            #expect(empty.page.hasOlder == false)
            #expect(empty.page.hasNewer == true)

            let around = try page(client, "?limit=4&around=0")
            #expect(around.ids == Array(ids[..<4]))
            #expect(around.page.anchor?.found == false)
            #expect(around.members["anchor"]?["index"] == .null)
        }
    }

    @Test func aroundPlacesTheAnchorAndReportsItsIndex() throws {
        try withRunningServer { client in
            let ids = try seed(client, count: 30)
            let middle = try page(client, "?limit=6&around=\(ids[15])")
            #expect(middle.ids == Array(ids[12..<18]))
            #expect(middle.page.anchor == HistoryPage.Anchor(id: ids[15], found: true, index: 3))

            let nearTop = try page(client, "?limit=6&around=\(ids[1])")
            #expect(nearTop.ids == Array(ids[0..<6]))
            #expect(nearTop.page.anchor?.index == 1)

            // An id of the other conversation is a position here, not a message.
            let otherID = ids[15] + 1
            let missing = try page(client, "?limit=4&around=\(otherID)")
            #expect(missing.page.anchor?.found == false)
            #expect(missing.members["anchor"]?["index"] == .null)
        }
    }

    @Test func afterWithWindowResetsOnlyWhenTooFarBehind() throws {
        try withRunningServer { client in
            let ids = try seed(client, count: 30)
            let near = try page(client, "?limit=10&after=\(ids[25])&window=10")
            #expect(near.page.reset == false)
            #expect(near.ids == Array(ids[26...]))
            let far = try page(client, "?limit=10&after=\(ids[2])&window=10")
            #expect(far.page.reset == true)
            #expect(far.ids == Array(ids[20...]))
            #expect(far.page.hasNewer == false)
        }
    }

    @Test(arguments: [
        ("?after=-0", "invalid_cursor"), ("?before=-1", "invalid_cursor"), ("?after=abc", "invalid_cursor"),
        ("?around=9223372036854775808", "invalid_cursor"), ("?before=", "invalid_cursor"), ("?before=1&before=2", "invalid_cursor"),
        ("?before=1.5", "invalid_cursor"), ("?before=%zz", "invalid_cursor"), ("?before=+1", "invalid_cursor"),
        ("?limit=0", "invalid_limit"), ("?limit=201", "invalid_limit"), ("?limit=x", "invalid_limit"),
        ("?limit=5&limit=5", "invalid_limit"), ("?limit=-5", "invalid_limit"), ("?limit=99999999999999999999", "invalid_limit"),
        ("?around=5&before=9", "conflicting_cursors"), ("?around=5&after=1", "conflicting_cursors"),
        ("?window=10", "invalid_window"), ("?before=5&window=10", "invalid_window"),
        ("?after=5&before=9&window=10", "invalid_window"), ("?around=5&window=10", "invalid_window"),
        ("?after=5&window=0", "invalid_window"), ("?after=5&window=10001", "invalid_window"),
        ("?after=5&window=x", "invalid_window"), ("?after=5&window=1&window=2", "invalid_window"),
    ])
    func invalidPageParameters(_ query: String, _ code: String) throws {
        try withRunningServer { client in
            try client.createConversation("c")
            expectError(try client.get("/v1/conversations/c/messages\(query)"), 400, code)
        }
    }

    @Test func unknownParametersAreIgnoredAndLimitsAreInclusive() throws {
        try withRunningServer { client in
            let ids = try seed(client, count: 3)
            #expect(try page(client, "?foo=1&foo=2&limit=200").ids == ids)
            #expect(try page(client, "?limit=1").ids == [ids[2]])
            #expect(try page(client, "?after=\(ids[0])&window=10000&limit=1").page.reset == false)
        }
    }
}
