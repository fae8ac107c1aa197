import Foundation
import HistoryClient
import Testing

/// Decoding the contract's JSON shapes, dates included, identically on Linux and Darwin.
@Suite("ChatHistoryClient models")
struct ModelTests {
    @Test func decodesAMessageWithEveryKey() throws {
        let json = #"""
        {"id": 4711, "conversation_id": "general", "sender": "ana", "body": "hello",
         "created_at": "2026-11-21T10:00:00.123Z", "edited_at": null, "deleted": false,
         "reply_to": 17, "client_id": "9b1f", "version": 9001}
        """#
        let message = try HistoryJSON.makeDecoder().decode(HistoryMessage.self, from: Data(json.utf8))
        #expect(message.id == 4711 && message.conversationID == "general")
        #expect(message.replyTo == 17 && message.clientID == "9b1f" && message.version == 9001)
        #expect(message.editedAt == nil)
        // 2026-11-21T10:00:00Z is 1795255200 seconds after the epoch.
        #expect(Int64((message.createdAt.timeIntervalSince1970 * 1000).rounded()) == 1_795_255_200_123)
    }

    @Test func roundTripsThroughTheEncoder() throws {
        let message = HistoryMessage(id: 1, conversationID: "c", sender: "s", body: "b",
                                     createdAt: Date(timeIntervalSince1970: 1_795_255_200.5),
                                     editedAt: Date(timeIntervalSince1970: 0), version: 3)
        let data = try HistoryJSON.makeEncoder().encode(message)
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.contains(#""created_at":"2026-11-21T10:00:00.500Z""#))
        #expect(text.contains(#""edited_at":"1970-01-01T00:00:00.000Z""#))
        #expect(try HistoryJSON.makeDecoder().decode(HistoryMessage.self, from: data) == message)
    }

    @Test(arguments: [
        ("2026-11-21T10:00:00Z", 1_795_255_200_000),
        ("2026-11-21T10:00:00.1Z", 1_795_255_200_100),
        ("2026-11-21T10:00:00.123456Z", 1_795_255_200_123),
        ("2026-11-21T10:00:00.123+00:00", 1_795_255_200_123),
        ("1969-12-31T23:59:59.999Z", -1),
    ] as [(String, Int64)])
    func decodesTimestamps(text: String, milliseconds: Int64) throws {
        let json = Data(#"{"status": "x", "when": "\#(text)"}"#.utf8)
        struct Probe: Decodable { var when: Date }
        let probe = try HistoryJSON.makeDecoder().decode(Probe.self, from: json)
        #expect(Int64((probe.when.timeIntervalSince1970 * 1000).rounded()) == milliseconds)
    }

    @Test(arguments: ["2026-11-21 10:00:00Z", "2026-13-01T00:00:00Z", "2026-11-21T10:00:00", "yesterday",
                      "2026-11-21T10:00:00.Z", "2026-11-21T10:00:00+02:00"])
    func rejectsOtherTimestamps(text: String) {
        struct Probe: Decodable { var when: Date }
        #expect(throws: DecodingError.self) {
            try HistoryJSON.makeDecoder().decode(Probe.self, from: Data(#"{"when": "\#(text)"}"#.utf8))
        }
    }

    @Test func decodesPagesWithAnchorAndReset() throws {
        let json = #"""
        {"messages": [], "has_older": true, "has_newer": false, "oldest_id": null, "newest_id": null,
         "version": 3, "anchor": {"id": 5, "found": false, "index": null}, "reset": true}
        """#
        let page = try HistoryJSON.makeDecoder().decode(HistoryPage.self, from: Data(json.utf8))
        #expect(page.hasOlder && !page.hasNewer && page.version == 3)
        #expect(page.anchor == HistoryPage.Anchor(id: 5, found: false, index: nil))
        #expect(page.reset == true)
    }

    @Test func unknownErrorCodesSurviveAndKnownOnesCompare() {
        #expect(HistoryErrorCode(rawValue: "conversation_not_found") == .conversationNotFound)
        #expect(HistoryErrorCode(rawValue: "from_the_future").rawValue == "from_the_future")
    }

    @Test func reconnectDelaysGrowToTheCeiling() {
        let policy = ReconnectPolicy(initialDelay: .milliseconds(100), multiplier: 2, maximumDelay: .seconds(1),
                                     jitter: 0.5)
        #expect(policy.delay(afterFailures: 1, randomFraction: 0) == .milliseconds(100))
        #expect(policy.delay(afterFailures: 3, randomFraction: 0) == .milliseconds(400))
        #expect(policy.delay(afterFailures: 10, randomFraction: 0) == .seconds(1))
        #expect(policy.delay(afterFailures: 1_000, randomFraction: 0) == .seconds(1))
        #expect(policy.delay(afterFailures: 3, randomFraction: 1) == .milliseconds(200))
    }
}
