import Foundation
import HTTPCore
import HistoryStore
import Testing
@testable import HistoryAPI

@Suite("JSONWriter")
struct JSONWriterTests {
    private static let messageKeys: Set<String> = [
        "id", "conversation_id", "sender", "body", "created_at", "edited_at", "deleted", "reply_to", "client_id", "version",
    ]

    private func sampleMessage(id: Int64, body: String = "hello \"world\"\n\\ \u{01} é 😀", edited: Bool = false) -> Message {
        Message(id: id, conversationID: ConversationID("general")!, sender: "ana", body: body,
                createdAt: Timestamp(millisecondsSinceEpoch: 1_795_255_200_123),
                editedAt: edited ? Timestamp(millisecondsSinceEpoch: 1_795_255_201_000) : nil,
                deleted: false, replyTo: edited ? 3 : nil, clientID: edited ? "c-1" : nil, version: 9001)
    }

    private func rows(_ messages: [Message]) -> MessageRows {
        MessageRows(messages, conversationID: ConversationID("general")!)
    }

    /// Parses with Foundation: proof that the bytes are JSON other parsers accept.
    private func object(_ bytes: [UInt8]) throws -> [String: Any] {
        let value = try JSONSerialization.jsonObject(with: Data(bytes))
        return try #require(value as? [String: Any])
    }

    @Test func messageRoundTripsWithEveryKey() throws {
        let message = sampleMessage(id: 4711)
        let decoded = try object(JSONWriter.message(message))
        #expect(Set(decoded.keys) == Self.messageKeys)
        #expect(decoded["id"] as? Int == 4711)
        #expect(decoded["conversation_id"] as? String == "general")
        #expect(decoded["sender"] as? String == "ana")
        #expect(decoded["body"] as? String == message.body)
        #expect(decoded["created_at"] as? String == "2026-11-21T10:00:00.123Z")
        #expect(decoded["edited_at"] is NSNull)
        #expect(decoded["deleted"] as? Bool == false)
        #expect(decoded["reply_to"] is NSNull)
        #expect(decoded["client_id"] is NSNull)
        #expect(decoded["version"] as? Int == 9001)

        let edited = try object(JSONWriter.message(sampleMessage(id: 1, edited: true)))
        #expect(edited["edited_at"] as? String == "2026-11-21T10:00:01.000Z")
        #expect(edited["reply_to"] as? Int == 3)
        #expect(edited["client_id"] as? String == "c-1")
    }

    @Test func conversationRoundTrips() throws {
        let empty = Conversation(id: ConversationID("c_1-x")!, title: nil, createdAt: Timestamp(millisecondsSinceEpoch: 0),
                                 messageCount: 0, oldestID: nil, newestID: nil, version: 0)
        let decoded = try object(JSONWriter.conversation(empty))
        #expect(Set(decoded.keys) == ["id", "title", "created_at", "message_count", "oldest_id", "newest_id", "version"])
        #expect(decoded["title"] is NSNull)
        #expect(decoded["oldest_id"] is NSNull)
        #expect(decoded["created_at"] as? String == "1970-01-01T00:00:00.000Z")
        var full = empty
        full.title = "Tea \"party\""
        full.messageCount = 3
        full.oldestID = 1
        full.newestID = Int64.max
        full.version = 7
        let decodedFull = try object(JSONWriter.conversation(full))
        #expect(decodedFull["title"] as? String == "Tea \"party\"")
        #expect(decodedFull["newest_id"] as? Int == Int.max)
        #expect(decodedFull["message_count"] as? Int == 3)
    }

    @Test func pageRoundTripsWithOptionalMembersOnlyWhenSet() throws {
        let messages = (1...3).map { sampleMessage(id: Int64($0)) }
        let plain = try object(JSONWriter.page(Page(rows: rows(messages), hasOlder: true, hasNewer: false, version: 12)))
        #expect(Set(plain.keys) == ["messages", "has_older", "has_newer", "oldest_id", "newest_id", "version"])
        #expect((plain["messages"] as? [[String: Any]])?.compactMap { $0["id"] as? Int } == [1, 2, 3])
        #expect(plain["has_older"] as? Bool == true)
        #expect(plain["oldest_id"] as? Int == 1)
        #expect(plain["newest_id"] as? Int == 3)

        let around = try object(JSONWriter.page(Page(rows: rows(messages), hasOlder: false, hasNewer: false, version: 1,
                                                     anchor: .init(id: 2, found: true, index: 1), reset: false)))
        #expect(Set(around.keys) == ["messages", "has_older", "has_newer", "oldest_id", "newest_id", "version", "anchor", "reset"])
        let anchor = try #require(around["anchor"] as? [String: Any])
        #expect(anchor["id"] as? Int == 2)
        #expect(anchor["found"] as? Bool == true)
        #expect(anchor["index"] as? Int == 1)
        #expect(around["reset"] as? Bool == false)

        let empty = try object(JSONWriter.page(Page(rows: rows([]), hasOlder: false, hasNewer: false, version: 0,
                                                    anchor: .init(id: 9, found: false, index: nil))))
        #expect(empty["oldest_id"] is NSNull)
        #expect((try #require(empty["anchor"] as? [String: Any]))["index"] is NSNull)
    }

    @Test func changeFeedRoundTrips() throws {
        let feed = ChangeFeed(events: [
            ChangeEvent(kind: .created, message: sampleMessage(id: 1)),
            ChangeEvent(kind: .edited, message: sampleMessage(id: 2, edited: true)),
            ChangeEvent(kind: .deleted, message: sampleMessage(id: 3, body: "")),
        ], hasMore: true, version: 9001)
        let decoded = try object(JSONWriter.changeFeed(feed))
        #expect(Set(decoded.keys) == ["events", "has_more", "version"])
        let events = try #require(decoded["events"] as? [[String: Any]])
        #expect(events.map { $0["type"] as? String } == ["created", "edited", "deleted"])
        #expect(events.allSatisfy { Set($0.keys) == ["version", "type", "message"] })
        #expect(events.allSatisfy { Set(($0["message"] as? [String: Any])?.keys ?? [:].keys) == Self.messageKeys })
        #expect(decoded["has_more"] as? Bool == true)
    }

    /// A page is written from stored rows, a single message from a
    /// `Message`: both writers must give the same bytes for every message,
    /// whatever its strings hold (escapes, multi-byte characters, nulls).
    @Test func pageMessagesAreByteForByteTheSingleMessageForm() throws {
        var generator = SystemRandomNumberGenerator()
        let alphabet: [Character] = ["a", "b", " ", "\"", "\\", "\n", "\u{0}", "\u{1F}", "é", "😀", "/"]
        func text(_ range: ClosedRange<Int>) -> String {
            String((0..<Int.random(in: range, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! })
        }
        for round in 0..<200 {
            let messages = (0..<Int.random(in: 0...60, using: &generator)).map { index in
                let edited = Bool.random(using: &generator)
                return Message(id: Int64(round * 100 + index + 1), conversationID: ConversationID("general")!,
                               sender: text(1...20), body: text(0...400),
                               createdAt: Timestamp(millisecondsSinceEpoch: Int64.random(in: 0...4_102_444_800_000, using: &generator)),
                               editedAt: edited ? Timestamp(millisecondsSinceEpoch: 1_795_255_201_000) : nil,
                               deleted: Bool.random(using: &generator),
                               replyTo: Bool.random(using: &generator) ? Int64.random(in: 1...Int64.max, using: &generator) : nil,
                               clientID: Bool.random(using: &generator) ? text(1...40) : nil,
                               version: Int64.random(in: 0...Int64.max, using: &generator))
            }
            let page = Page(rows: rows(messages), hasOlder: false, hasNewer: true, version: 5)
            #expect(page.messages == messages)
            var expected = Array(#"{"messages":["#.utf8)
            expected += messages.map(JSONWriter.message).joined(separator: [UInt8(ascii: ",")])
            expected += Array(#"],"has_older":false,"has_newer":true,"oldest_id":"#.utf8)
            expected += Array((messages.first.map { String($0.id) } ?? "null").utf8)
            expected += Array(#","newest_id":"#.utf8)
            expected += Array((messages.last.map { String($0.id) } ?? "null").utf8)
            expected += Array(#","version":5}"#.utf8)
            #expect(JSONWriter.page(page) == expected)
        }
    }

    /// Every byte of the largest body escaped as `\u00XX` (six times its
    /// size): the writer's room for a message must hold it.
    @Test func worstCaseEscapingFitsItsBound() throws {
        let body = String(repeating: "\u{1}", count: MessageRules.maximumBodyBytes)
        let messages = (1...3).map { Message(id: $0, conversationID: ConversationID("general")!, sender: String(repeating: "\u{2}", count: 64),
                                              body: body, createdAt: Timestamp(millisecondsSinceEpoch: 0), editedAt: nil,
                                              deleted: false, replyTo: nil, clientID: String(repeating: "\"", count: 128), version: 1) }
        let decoded = try object(JSONWriter.page(Page(rows: rows(messages), hasOlder: false, hasNewer: false, version: 1)))
        let written = try #require(decoded["messages"] as? [[String: Any]])
        #expect(written.map { $0["body"] as? String } == messages.map(\.body))
        #expect(try object(JSONWriter.message(messages[0]))["client_id"] as? String == messages[0].clientID)
    }

    @Test func stringsEscapeExactlyAsHTTPCoreDoes() {
        var generator = SystemRandomNumberGenerator()
        // Plain letters weighted up, so long runs without escapes (the word-at-a-time path) occur too.
        let alphabet: [Character] = ["a", "b", "c", "d", "e", "f", "g", "h", "\"", "\\", "\n", "\r", "\t", "\u{0}", "\u{1F}",
                                     "\u{20}", "\u{7F}", "é", "😀", "/", " ", "~", "!", "#", "[", "]"]
        for _ in 0..<2_000 {
            let length = Int.random(in: 0..<100, using: &generator)
            let text = String((0..<length).map { _ in alphabet.randomElement(using: &generator)! })
            // Through the cursor every document writes its strings with.
            var buffer = JSONBuffer(capacity: 16)
            buffer.write(atMost: ByteCursor.stringBound(text.utf8.count)) { $0.writeString(text) }
            let ours = buffer.finish()
            var reference: [UInt8] = []
            appendJSONString(text, to: &reference)
            #expect(ours == reference, "\(text.debugDescription)")
        }
    }

    @Test(arguments: [0, 1, -1, 9, 10, 99, 100, 1234567890, Int64.max, Int64.min, Int64.min + 1])
    func integersMatchTheirDecimalForm(_ value: Int64) {
        var bytes: [UInt8] = []
        JSONWriter.appendInteger(value, to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == String(value))
    }
}
