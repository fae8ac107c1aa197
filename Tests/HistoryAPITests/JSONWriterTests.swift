import Foundation
import HTTPCore
import HistoryClient
import HistoryStore
import HistoryTestSupport
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

    /// Decodes with Foundation into the client's model: proof that the
    /// bytes are JSON other parsers accept, in the contract's shape.
    private func decode<T: Decodable>(_ type: T.Type, _ bytes: [UInt8]) throws -> T {
        try HistoryJSON.makeDecoder().decode(T.self, from: Data(bytes))
    }

    /// The document as written, to tell a `null` member from an absent one.
    private func members(_ bytes: [UInt8]) throws -> JSONTree {
        try JSONDecoder().decode(JSONTree.self, from: Data(bytes))
    }

    @Test func messageRoundTripsWithEveryKey() throws {
        let message = sampleMessage(id: 4711)
        let written = try members(JSONWriter.message(message))
        #expect(written.keys == Self.messageKeys)
        #expect(written["created_at"] == .string("2026-11-21T10:00:00.123Z"))
        #expect(written["edited_at"] == .null && written["reply_to"] == .null && written["client_id"] == .null)
        let decoded = try decode(HistoryMessage.self, JSONWriter.message(message))
        #expect(decoded.id == 4711)
        #expect(decoded.conversationID == "general")
        #expect(decoded.sender == "ana")
        #expect(decoded.body == message.body)
        #expect(decoded.deleted == false)
        #expect(decoded.version == 9001)

        let edited = try members(JSONWriter.message(sampleMessage(id: 1, edited: true)))
        #expect(edited["edited_at"] == .string("2026-11-21T10:00:01.000Z"))
        #expect(edited["reply_to"] == .integer(3))
        #expect(edited["client_id"] == .string("c-1"))
    }

    @Test func conversationRoundTrips() throws {
        let empty = Conversation(id: ConversationID("c_1-x")!, title: nil, createdAt: Timestamp(millisecondsSinceEpoch: 0),
                                 messageCount: 0, oldestID: nil, newestID: nil, version: 0)
        let written = try members(JSONWriter.conversation(empty))
        #expect(written.keys == ["id", "title", "created_at", "message_count", "oldest_id", "newest_id", "version"])
        #expect(written["title"] == .null && written["oldest_id"] == .null)
        #expect(written["created_at"] == .string("1970-01-01T00:00:00.000Z"))
        var full = empty
        full.title = "Tea \"party\""
        full.messageCount = 3
        full.oldestID = 1
        full.newestID = Int64.max
        full.version = 7
        let decodedFull = try decode(HistoryConversation.self, JSONWriter.conversation(full))
        #expect(decodedFull.title == "Tea \"party\"")
        #expect(decodedFull.newestID == Int64.max)
        #expect(decodedFull.messageCount == 3)
    }

    @Test func pageRoundTripsWithOptionalMembersOnlyWhenSet() throws {
        let messages = (1...3).map { sampleMessage(id: Int64($0)) }
        let plainBytes = JSONWriter.page(Page(rows: rows(messages), hasOlder: true, hasNewer: false, version: 12))
        #expect(try members(plainBytes).keys == ["messages", "has_older", "has_newer", "oldest_id", "newest_id", "version"])
        let plain = try decode(HistoryPage.self, plainBytes)
        #expect(plain.messages.map(\.id) == [1, 2, 3])
        #expect(plain.hasOlder == true)
        #expect(plain.oldestID == 1)
        #expect(plain.newestID == 3)

        let aroundBytes = JSONWriter.page(Page(rows: rows(messages), hasOlder: false, hasNewer: false, version: 1,
                                               anchor: .init(id: 2, found: true, index: 1), reset: false))
        #expect(try members(aroundBytes).keys
                == ["messages", "has_older", "has_newer", "oldest_id", "newest_id", "version", "anchor", "reset"])
        let around = try decode(HistoryPage.self, aroundBytes)
        #expect(around.anchor == HistoryPage.Anchor(id: 2, found: true, index: 1))
        #expect(around.reset == false)

        let empty = try members(JSONWriter.page(Page(rows: rows([]), hasOlder: false, hasNewer: false, version: 0,
                                                     anchor: .init(id: 9, found: false, index: nil))))
        #expect(empty["oldest_id"] == .null)
        #expect(empty["anchor"]?["index"] == .null)
    }

    @Test func changeFeedRoundTrips() throws {
        let feed = ChangeFeed(events: [
            ChangeEvent(kind: .created, message: sampleMessage(id: 1)),
            ChangeEvent(kind: .edited, message: sampleMessage(id: 2, edited: true)),
            ChangeEvent(kind: .deleted, message: sampleMessage(id: 3, body: "")),
        ], hasMore: true, version: 9001)
        let written = try members(JSONWriter.changeFeed(feed))
        #expect(written.keys == ["events", "has_more", "version"])
        let events = written["events"]?.elements ?? []
        #expect(events.count == 3)
        #expect(events.allSatisfy { $0.keys == ["version", "type", "message"] })
        #expect(events.allSatisfy { $0["message"]?.keys == Self.messageKeys })
        let decoded = try decode(HistoryEventBatch.self, JSONWriter.changeFeed(feed))
        #expect(decoded.events.map(\.kind) == [.created, .edited, .deleted])
        #expect(decoded.hasMore == true)
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
        let decoded = try decode(HistoryPage.self, JSONWriter.page(Page(rows: rows(messages), hasOlder: false, hasNewer: false, version: 1)))
        #expect(decoded.messages.map(\.body) == messages.map(\.body))
        #expect(try decode(HistoryMessage.self, JSONWriter.message(messages[0])).clientID == messages[0].clientID)
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
