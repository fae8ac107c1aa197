import Foundation
import Testing
@testable import HistoryLoad

/// The inbox scan and checks on bodies written by hand: each check must
/// notice the one fault it is about, and pass a correct answer.
@Suite("Inbox checks")
struct InboxChecksTests {
    static func row(_ id: String, last: Int64?, read: Int64? = nil, first: Int64? = nil, unread: Int = 0,
                    capped: Bool = false, activity: Int64 = 1) -> String {
        let message = last.map { #"{"id":\#($0),"conversation_id":"\#(id)","sender":"ana","body":"x","created_at":"2026-11-21T10:00:00.123Z","edited_at":null,"deleted":false,"reply_to":null,"client_id":"p1-2-777","version":3}"# } ?? "null"
        let text = { (value: Int64?) in value.map(String.init) ?? "null" }
        return #"{"conversation":{"id":"\#(id)","title":null,"created_at":"2026-11-21T10:00:00.000Z","message_count":1,"oldest_id":\#(text(last)),"newest_id":\#(text(last)),"version":3},"role":"member","last_message":\#(message),"last_read_id":\#(text(read)),"first_unread_id":\#(text(first)),"unread_count":\#(unread),"unread_capped":\#(capped),"activity":\#(activity)}"#
    }

    static func page(_ rows: [String], cursor: String? = nil) throws -> InboxSummary {
        var summary = InboxSummary()
        let next = cursor.map { "\"\($0)\"" } ?? "null"
        try summary.scan(Array(#"{"conversations":[\#(rows.joined(separator: ","))],"next_cursor":\#(next),"activity":77}"#.utf8))
        return summary
    }

    @Test func scansRowsAndCursor() throws {
        let summary = try Self.page([Self.row("b", last: 40, read: 30, first: 31, unread: 9), Self.row("a", last: nil)], cursor: "bToxMjoz")
        #expect(summary.rows.count == 2 && summary.nextCursor == "bToxMjoz" && summary.activity == 77)
        let first = summary.rows[0]
        #expect(first.conversationID == "b" && first.newestID == 40 && first.lastMessageID == 40 && first.lastMessageClientID == "p1-2-777")
        #expect(first.lastReadID == 30 && first.firstUnreadID == 31 && first.unreadCount == 9 && !first.unreadCapped && first.role == "member")
        #expect(summary.rows[1].lastMessageID == nil && summary.rows[1].newestID == nil)
        var feed = InboxSummary()
        try feed.scan(Array(#"{"events":[\#(Self.row("b", last: 40)),{"type":"removed","conversation_id":"c","activity":9}],"has_more":true,"activity":9}"#.utf8))
        #expect(feed.rows.count == 2 && feed.rows[1].removed && feed.rows[1].conversationID == "c" && feed.hasMore)
        #expect(throws: ScanError.self) { try Self.page([#"{"role":"member","unread_count":0,"activity":1}"#]) }
    }

    @Test func walkOrderAndRepeats() throws {
        let log = InvariantLog()
        var walk = InboxWalk()
        walk.start()
        walk.check(try Self.page([Self.row("c", last: 50), Self.row("b", last: 40)]), context: "p1", log: log)
        walk.check(try Self.page([Self.row("d", last: 30), Self.row("a", last: nil), Self.row("e", last: nil)]), context: "p2", log: log)
        #expect(log.totalViolations == 0)
        // A repeat across pages, then a row above the one before it, then an empty one out of id order.
        walk.check(try Self.page([Self.row("c", last: 20), Self.row("f", last: 60)]), context: "p3", log: log)
        #expect(log.entries["inbox_no_repeat"]?.count == 1)
        #expect(log.entries["inbox_order"]?.count == 2)
        walk.start()
        walk.check(try Self.page([Self.row("b", last: nil), Self.row("a", last: nil)]), context: "p4", log: log)
        #expect(log.entries["inbox_order"]?.count == 3)
    }

    @Test func rowsThatContradictThemselves() throws {
        let log = InvariantLog()
        let good = try Self.page([Self.row("a", last: 40, read: 30, first: 31, unread: 9), Self.row("b", last: 1200, first: 1, unread: 999, capped: true)])
        for row in good.rows { #expect(InboxChecks.checkRow(row, context: "ok", log: log)) }
        let bad = try Self.page([
            Self.row("a", last: 40, read: 30, first: nil, unread: 9),
            Self.row("b", last: 40, unread: 5, capped: true, activity: 1).replacingOccurrences(of: #""first_unread_id":null"#, with: #""first_unread_id":2"#),
            Self.row("c", last: 40, read: 30, first: 30, unread: 1),
            Self.row("d", last: 40, read: 41),
        ])
        for row in bad.rows { #expect(!InboxChecks.checkRow(row, context: "bad", log: log)) }
        #expect(log.entries["inbox_row_consistent"]?.count == 4)
    }

    @Test func markersAndTheExactUnreadModel() throws {
        let log = InvariantLog()
        var model = ReadMarkerModel()
        model.observe("a", lastReadID: 40, context: "t", log: log)
        model.observe("a", lastReadID: 45, context: "t", log: log)
        #expect(log.totalViolations == 0 && model.marker(of: "a") == 45)
        model.observe("a", lastReadID: 44, context: "t", log: log)
        model.observe("a", lastReadID: nil, context: "t", log: log)
        #expect(log.entries["marker_forward"]?.count == 2 && model.marker(of: "a") == 45)
        // Nobody posted since the marker: nothing may be unread.
        let quiet = try Self.page([Self.row("a", last: 45, read: 45)]).rows[0]
        #expect(model.checkUnread(quiet, context: "t", log: log) && log.entries["unread_exact"] == nil)
        let wrong = try Self.page([Self.row("a", last: 45, read: 45, first: 45, unread: 1)]).rows[0]
        #expect(model.checkUnread(wrong, context: "t", log: log) && log.entries["unread_exact"]?.count == 1)
        // Someone posted since: the model cannot know, nothing compared.
        let moved = try Self.page([Self.row("a", last: 46, read: 45, first: 46, unread: 1)]).rows[0]
        #expect(!model.checkUnread(moved, context: "t", log: log))
    }

    @Test func cursorsArePercentEncodedAndWaitsFormatted() {
        #expect(InboxUser.percentEncoded("bToxMjoz") == "bToxMjoz")
        #expect(InboxUser.percentEncoded("a+b/c=") == "a%2Bb%2Fc%3D")
        #expect(InboxFeedReader.waitText(9.5) == "9.500" && InboxFeedReader.waitText(0.05) == "0.050")
    }
}
