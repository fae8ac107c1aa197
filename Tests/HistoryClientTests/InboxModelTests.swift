import Foundation
import HistoryClient
import Testing

/// Decoding the inbox's JSON shapes exactly as the contract writes them.
@Suite("ChatHistoryClient inbox models")
struct InboxModelTests {
    static let row = #"""
    {"conversation": {"id": "general", "title": "General", "created_at": "2026-11-21T10:00:00Z",
      "message_count": 12, "oldest_id": 3, "newest_id": 40, "version": 15},
     "role": "owner",
     "last_message": {"id": 40, "conversation_id": "general", "sender": "ben", "body": "",
      "created_at": "2026-11-21T10:05:00Z", "edited_at": null, "deleted": true, "reply_to": null,
      "client_id": null, "version": 15},
     "last_read_id": 31, "first_unread_id": 33, "unread_count": 999, "unread_capped": true,
     "activity": 9001}
    """#

    @Test func decodesARowWithItsReadStateAndATombstoneAsLastMessage() throws {
        let row = try HistoryJSON.makeDecoder().decode(HistoryInboxRow.self, from: Data(Self.row.utf8))
        #expect(row.id == "general" && row.conversation.newestID == 40 && row.role == .owner)
        #expect(row.lastMessage?.deleted == true)
        #expect(row.read == HistoryReadState(lastReadID: 31, firstUnreadID: 33, unreadCount: 999, unreadCapped: true))
        #expect(row.activity == 9001)
        let again = try HistoryJSON.makeEncoder().encode(row)
        #expect(try HistoryJSON.makeDecoder().decode(HistoryInboxRow.self, from: again) == row)
    }

    @Test func decodesAnEmptyConversationsRowWithNulls() throws {
        let json = #"""
        {"conversation": {"id": "quiet", "created_at": "2026-11-21T10:00:00Z", "message_count": 0,
          "oldest_id": null, "newest_id": null, "version": 0},
         "role": "member", "last_message": null, "last_read_id": null, "first_unread_id": null,
         "unread_count": 0, "unread_capped": false, "activity": 7}
        """#
        let row = try HistoryJSON.makeDecoder().decode(HistoryInboxRow.self, from: Data(json.utf8))
        #expect(row.lastMessage == nil && row.read.lastReadID == nil && !row.read.hasUnread)
        let text = String(decoding: try HistoryJSON.makeEncoder().encode(row), as: UTF8.self)
        #expect(text.contains(#""last_message":null"#) && text.contains(#""last_read_id":null"#))
    }

    @Test func decodesAPageAndItsCursor() throws {
        let json = #"{"conversations": [\#(Self.row)], "next_cursor": "bTo0MDoy", "activity": 9002}"#
        let page = try HistoryJSON.makeDecoder().decode(HistoryInboxPage.self, from: Data(json.utf8))
        #expect(page.conversations.map(\.id) == ["general"])
        #expect(page.nextCursor == "bTo0MDoy" && page.activity == 9002)
        let last = try HistoryJSON.makeDecoder().decode(
            HistoryInboxPage.self, from: Data(#"{"conversations": [], "next_cursor": null, "activity": 0}"#.utf8))
        #expect(last.nextCursor == nil)
    }

    @Test func decodesTheFeedsTwoKindsOfEvent() throws {
        let updated = Self.row.replacingOccurrences(of: #""activity": 9001}"#,
                                                    with: #""activity": 9001, "type": "updated"}"#)
        let json = #"""
        {"events": [\#(updated), {"type": "removed", "conversation_id": "old", "activity": 9003}],
         "has_more": false, "activity": 9003}
        """#
        let batch = try HistoryJSON.makeDecoder().decode(HistoryInboxEventBatch.self, from: Data(json.utf8))
        #expect(batch.events.map(\.activity) == [9001, 9003])
        #expect(batch.events.map(\.conversationID) == ["general", "old"])
        guard case .updated(let row) = batch.events[0] else {
            Issue.record("expected updated, got \(batch.events[0])")
            return
        }
        #expect(row.read.firstUnreadID == 33)
        #expect(batch.events[1] == .removed(conversationID: "old", activity: 9003))
        #expect(!batch.hasMore && batch.activity == 9003)
        let again = try HistoryJSON.makeEncoder().encode(batch)
        #expect(try HistoryJSON.makeDecoder().decode(HistoryInboxEventBatch.self, from: again) == batch)
    }

    @Test func rejectsAnEventOfAnUnknownType() {
        #expect(throws: DecodingError.self) {
            try HistoryJSON.makeDecoder().decode(
                HistoryInboxEvent.self, from: Data(#"{"type": "typing", "conversation_id": "x", "activity": 1}"#.utf8))
        }
    }

    @Test func decodesTheMarkersAnswer() throws {
        let json = #"{"last_read_id": 40, "first_unread_id": null, "unread_count": 0, "unread_capped": false}"#
        let state = try HistoryJSON.makeDecoder().decode(HistoryReadState.self, from: Data(json.utf8))
        #expect(state == HistoryReadState(lastReadID: 40, firstUnreadID: nil, unreadCount: 0, unreadCapped: false))
    }
}
