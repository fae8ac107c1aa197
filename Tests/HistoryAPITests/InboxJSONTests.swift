import Foundation
import HistoryClient
import HistoryStore
import HistoryTestSupport
import Testing
@testable import HistoryAPI

/// The inbox's writers without a server: every value that needs escaping,
/// the byte bounds (a wrong bound stops the process), and the budget.
@Suite("Inbox JSON")
struct InboxJSONTests {
    private func row(_ id: String, body: String = "hé \"quoted\"\n\u{01} 😀", title: String? = "Tïtle \\ \"x\"",
                     message: Bool = true, activity: Int64 = 7) -> InboxRow {
        let conversation = Conversation(id: ConversationID(id)!, title: title,
                                        createdAt: Timestamp(millisecondsSinceEpoch: 1_795_255_200_123),
                                        messageCount: message ? 1 : 0, oldestID: message ? 42 : nil,
                                        newestID: message ? 42 : nil, version: message ? 1 : 0)
        let last = message ? Message(id: 42, conversationID: ConversationID(id)!, sender: "bob", body: body,
                                     createdAt: Timestamp(millisecondsSinceEpoch: 1_795_255_200_456), editedAt: nil,
                                     deleted: false, replyTo: nil, clientID: "k\u{7f}\"", version: 1) : nil
        return InboxRow(conversation: conversation, role: .owner, lastMessage: last,
                        read: ReadState(lastReadID: nil, firstUnreadID: message ? 42 : nil, unreadCount: message ? 1 : 0,
                                        unreadCapped: false),
                        activity: activity)
    }

    private func tree(_ bytes: [UInt8]) throws -> JSONTree {
        try JSONDecoder().decode(JSONTree.self, from: Data(bytes))
    }

    @Test func aPageRoundTripsEveryValue() throws {
        let page = InboxPage(rows: [row("a"), row("b", message: false)], nextCursor: "bTo0Mjox", activity: 99)
        guard case .whole(let bytes) = JSONWriter.inboxPage(page) else {
            Issue.record("an unbudgeted page is written whole")
            return
        }
        let document = try tree(bytes)
        #expect(document["next_cursor"] == .string("bTo0Mjox"))
        #expect(document["activity"] == .integer(99))
        let rows = document["conversations"]?.elements ?? []
        #expect(rows.count == 2)
        #expect(rows[0]["conversation"]?["title"] == .string("Tïtle \\ \"x\""))
        #expect(rows[0]["last_message"]?["body"] == .string("hé \"quoted\"\n\u{01} 😀"))
        #expect(rows[0]["last_message"]?["client_id"] == .string("k\u{7f}\""))
        #expect(rows[0]["role"] == .string("owner"))
        #expect(rows[0]["first_unread_id"] == .integer(42))
        #expect(rows[0]["unread_capped"] == .bool(false))
        #expect(rows[1]["last_message"] == .null)
        #expect(rows[1]["conversation"]?["newest_id"] == .null)
    }

    @Test func theWorstCaseEscapesFitTheBounds() throws {
        // Every byte a six-byte escape: the bounds must still hold.
        let control = String(repeating: "\u{01}", count: 16_384)
        let page = InboxPage(rows: [row("a", body: control, title: String(repeating: "\u{02}", count: 256))],
                             nextCursor: nil, activity: 1)
        guard case .whole(let bytes) = JSONWriter.inboxPage(page) else {
            Issue.record("one row is always written")
            return
        }
        #expect(try tree(bytes)["conversations"]?.elements.first?["last_message"]?["body"] == .string(control))
        let feed = InboxFeed(events: [.updated(row("a", body: control))], hasMore: false, activity: 7)
        #expect(try tree(JSONWriter.inboxFeed(feed))["events"]?.elements.count == 1)
    }

    @Test func aPageOverTheBudgetSaysHowManyRowsFit() {
        let body = String(repeating: "x", count: 1000)
        let page = InboxPage(rows: (0..<6).map { row("c\($0)", body: body) }, nextCursor: "next", activity: 5)
        guard case .onlyFirst(let rows) = JSONWriter.inboxPage(page, budget: 4096) else {
            Issue.record("six rows of a kilobyte do not fit in 4096 bytes")
            return
        }
        #expect((1..<6).contains(rows))
        // As many rows as fit are written whole, within the budget.
        let fitting = InboxPage(rows: Array(page.rows.prefix(rows)), nextCursor: "next", activity: 5)
        guard case .whole(let bytes) = JSONWriter.inboxPage(fitting, budget: 4096) else {
            Issue.record("the rows that fit are written whole")
            return
        }
        #expect(bytes.count <= 4096)
        // One row larger than the budget is still answered.
        guard case .whole = JSONWriter.inboxPage(InboxPage(rows: [row("big", body: body)], nextCursor: nil, activity: 1),
                                                 budget: 512) else {
            Issue.record("a single row is always written")
            return
        }
    }

    @Test func aFeedOverTheBudgetStopsWithHasMoreAndTheLastWrittenActivity() throws {
        let body = String(repeating: "y", count: 1000)
        let events: [InboxEvent] = (0..<6).map { .updated(row("c\($0)", body: body, activity: Int64(10 + $0))) }
            + [.removed(conversationID: ConversationID("gone")!, activity: 20)]
        let bytes = JSONWriter.inboxFeed(InboxFeed(events: events, hasMore: false, activity: 20), budget: 4096)
        #expect(bytes.count <= 4096)
        let document = try tree(bytes)
        let written = document["events"]?.elements ?? []
        #expect(!written.isEmpty && written.count < events.count)
        #expect(document["has_more"] == .bool(true))
        #expect(document["activity"] == .integer(Int64(10 + written.count - 1)))

        let whole = try tree(JSONWriter.inboxFeed(InboxFeed(events: events, hasMore: false, activity: 20)))
        #expect(whole["has_more"] == .bool(false))
        #expect(whole["events"]?.elements.last == .object(["type": .string("removed"), "conversation_id": .string("gone"),
                                                           "activity": .integer(20)]))
    }

    @Test func aReadStateHasItsFourKeys() throws {
        let state = ReadState(lastReadID: 5, firstUnreadID: nil, unreadCount: 999, unreadCapped: true)
        #expect(String(decoding: JSONWriter.readState(state), as: UTF8.self)
                == #"{"last_read_id":5,"first_unread_id":null,"unread_count":999,"unread_capped":true}"#)
    }
}
