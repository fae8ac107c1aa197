import HistoryTestSupport
import Foundation
import HTTPCore
import Testing

/// `GET /v1/conversations/{cid}/messages?around_time=T` over real sockets
/// (docs/API.md, "Live"): the anchor is the smallest id created at or
/// after T, the page is that anchor's `around` page, and bad input is a 400.
@Suite struct JumpByTimeAPITests {
    /// Posts `count` messages, some in the same millisecond (quick posts),
    /// some apart (short sleeps), and returns them as the server answered.
    private func post(_ count: Int, to conversation: String, with client: HTTPClientConnection) throws -> [RawMessageBody] {
        var messages: [RawMessageBody] = []
        for index in 0..<count {
            messages.append(try client.appendRaw(conversation, body: "m\(index)"))
            if index % 3 == 2 { Thread.sleep(forTimeInterval: 0.004) }
        }
        return messages
    }

    /// The contract's anchor for `time`: the smallest id created at or after it.
    private func expectedAnchor(_ time: Int64, in messages: [RawMessageBody]) -> Int64? {
        messages.filter { milliseconds($0.created_at) >= time }.map(\.id).min()
    }

    @Test func theAnchorIsTheSmallestIDCreatedAtOrAfterTheTime() throws {
        try withRunningServer { server in
            let client = try server.connect()
            defer { client.close() }
            try client.createConversation("general")
            let messages = try post(24, to: "general", with: client)
            let times = messages.map { milliseconds($0.created_at) }
            // Created times never decrease in id order.
            #expect(times == times.sorted())
            for time in Set(times.flatMap { [$0 - 1, $0, $0 + 1] }).sorted() {
                try checkJump(to: time, messages: messages, client: client)
            }
            // Ties: of the messages sharing a millisecond, the smallest id is the anchor.
            for time in Set(times) {
                let tied = messages.filter { milliseconds($0.created_at) == time }.map(\.id)
                let page = try client.get("/v1/conversations/general/messages?around_time=\(rfc3339(time))").decode(JumpPageBody.self)
                #expect(page.anchor?.id == tied.min())
            }
        }
    }

    /// The jump to `time` is the `around` page of the contract's anchor.
    private func checkJump(to time: Int64, messages: [RawMessageBody], client: HTTPClientConnection) throws {
        let response = try client.get("/v1/conversations/general/messages?around_time=\(rfc3339(time))&limit=6")
        #expect(response.status == 200, "\(response.bodyText)")
        let page = try response.decode(JumpPageBody.self)
        guard let expected = expectedAnchor(time, in: messages) else {
            #expect(page.anchor == AnchorBody(id: nil, found: false, index: nil))
            return
        }
        let around = try client.get("/v1/conversations/general/messages?around=\(expected)&limit=6").decode(JumpPageBody.self)
        #expect(page.anchor == around.anchor && page.anchor?.found == true, "at \(time)")
        #expect(page.ids == around.ids && page.has_older == around.has_older && page.has_newer == around.has_newer)
        let index = page.anchor?.index ?? -1
        #expect(page.ids.indices.contains(index) && page.ids[index] == expected)
    }

    @Test func offsetsAndFractionsNameTheSameInstant() throws {
        try withRunningServer { server in
            let client = try server.connect()
            defer { client.close() }
            try client.createConversation("general")
            let messages = try post(9, to: "general", with: client)
            let time = milliseconds(messages[4].created_at)
            let expected = expectedAnchor(time, in: messages)
            for spelling in [rfc3339(time), rfc3339(time, offset: 3600), rfc3339(time, offset: -5 * 3600 - 1800),
                             rfc3339(time).replacingOccurrences(of: "Z", with: "000Z"),
                             // RFC 3339's fraction is `1*DIGIT`: any count is
                             // floored to milliseconds (40 digits once
                             // overflowed the parser and ended the server).
                             rfc3339(time).replacingOccurrences(of: "Z", with: String(repeating: "9", count: 40) + "Z"),
                             rfc3339(time).lowercased()] {
                let encoded = spelling.replacingOccurrences(of: "+", with: "%2B")
                let response = try client.get("/v1/conversations/general/messages?around_time=\(encoded)")
                #expect(response.status == 200, "\(spelling): \(response.bodyText)")
                #expect(try response.decode(JumpPageBody.self).anchor?.id == expected, "\(spelling)")
            }
        }
    }

    @Test func aTimeAfterEveryMessageAnswersTheNewestPage() throws {
        try withRunningServer { server in
            let client = try server.connect()
            defer { client.close() }
            try client.createConversation("general")
            try client.createConversation("empty")
            let messages = try post(7, to: "general", with: client)
            let page = try client.get("/v1/conversations/general/messages?around_time=2999-01-01T00:00:00Z&limit=5")
                .decode(JumpPageBody.self)
            #expect(page.anchor == AnchorBody(id: nil, found: false, index: nil))
            #expect(page.ids == messages.suffix(5).map(\.id) && page.has_older && !page.has_newer)
            let tree = try client.get("/v1/conversations/general/messages?around_time=2999-01-01T00:00:00Z").decode(JSONTree.self)
            #expect(tree["anchor"]?.keys == ["id", "found", "index"])

            let empty = try client.get("/v1/conversations/empty/messages?around_time=2000-01-01T00:00:00Z").decode(JumpPageBody.self)
            #expect(empty.ids.isEmpty && empty.anchor == AnchorBody(id: nil, found: false, index: nil))
            // Before every message: the first one.
            let first = try client.get("/v1/conversations/general/messages?around_time=2000-01-01T00:00:00Z&limit=3")
                .decode(JumpPageBody.self)
            #expect(first.anchor == AnchorBody(id: messages[0].id, found: true, index: 0))
            #expect(first.ids == messages.prefix(3).map(\.id) && !first.has_older && first.has_newer)
        }
    }

    @Test func badTimesAndOtherCursorsAreRefused() throws {
        try withRunningServer { server in
            let client = try server.connect()
            defer { client.close() }
            try client.createConversation("general")
            let id = try client.appendMessage("general")
            for bad in ["", "yesterday", "2026-11-21", "2026-11-21T10:00:00", "2026-13-01T00:00:00Z",
                        "2026-11-21T25:00:00Z", "2026-11-21T10:00:00.Z", "2026-11-21T10:00:00+1:00",
                        "2026-11-21T10:00:00%2B24:00", "1764201600000", "2026-11-21T10:00:00.1234x5Z",
                        "2026-11-21T10:00:00." + String(repeating: "9", count: 4000) + "+01:0",
                        String(repeating: "9", count: 60) + "-11-21T10:00:00Z"] {
                expectError(try client.get("/v1/conversations/general/messages?around_time=\(bad)"), 400, "invalid_time")
            }
            expectError(try client.get("/v1/conversations/general/messages?around_time=2026-11-21T10:00:00Z&around_time=2026-11-21T10:00:00Z"),
                        400, "invalid_time")
            let time = "2026-11-21T10:00:00Z"
            for cursor in ["before=\(id)", "after=\(id)", "around=\(id)", "after=0&before=\(id)"] {
                expectError(try client.get("/v1/conversations/general/messages?around_time=\(time)&\(cursor)"),
                            400, "conflicting_cursors")
            }
            expectError(try client.get("/v1/conversations/general/messages?around_time=\(time)&window=10"), 400, "invalid_window")
            expectError(try client.get("/v1/conversations/general/messages?around_time=\(time)&limit=0"), 400, "invalid_limit")
            expectError(try client.get("/v1/conversations/nowhere/messages?around_time=\(time)"), 404, "conversation_not_found")
        }
    }
}
