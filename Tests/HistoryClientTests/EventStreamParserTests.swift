import Foundation
import HistoryClient
import Testing

/// The event-stream format as the spec defines it, fed in every way a
/// network may cut it.
@Suite("Event stream parser")
struct EventStreamParserTests {
    /// Parses `text` cut into pieces of `size` bytes.
    static func parse(_ text: String, chunk size: Int) -> (events: [ServerSentEvent], parser: EventStreamParser) {
        var parser = EventStreamParser()
        var events: [ServerSentEvent] = []
        let bytes = Array(text.utf8)
        var start = 0
        while start < bytes.count {
            let end = min(start + size, bytes.count)
            events += parser.parse(bytes[start..<end])
            start = end
        }
        return (events, parser)
    }

    static let sample = ": hello\n\nid: 7\nevent: created\ndata: {\"a\":1}\n\n"
        + "data: line one\ndata: line two\n\n"
        + "id: 9\nevent: reset\ndata: {}\n\n"

    static let expected = [
        ServerSentEvent(id: "7", type: "created", data: #"{"a":1}"#),
        ServerSentEvent(id: "7", type: "message", data: "line one\nline two"),
        ServerSentEvent(id: "9", type: "reset", data: "{}"),
    ]

    @Test func idEventAndMultiLineData() {
        let (events, parser) = Self.parse(Self.sample, chunk: 4096)
        #expect(events == Self.expected)
        #expect(parser.lastEventID == "9")
        #expect(parser.comments == 1)
    }

    /// Every cut of the stream, one byte at a time included, gives the same events.
    @Test(arguments: [1, 2, 3, 5, 7, 13, 64])
    func chunksCutAnywhere(size: Int) {
        #expect(Self.parse(Self.sample, chunk: size).events == Self.expected)
    }

    /// CRLF, CR and LF end lines alike, also when a CRLF is cut between its two bytes.
    @Test(arguments: [1, 2, 3, 4096])
    func everyLineEnding(size: Int) {
        for ending in ["\r\n", "\r", "\n"] {
            let text = Self.sample.replacingOccurrences(of: "\n", with: ending)
            #expect(Self.parse(text, chunk: size).events == Self.expected, "ending \(ending.debugDescription), chunk \(size)")
        }
    }

    @Test func aCharacterCutInTheMiddleOfItsBytes() {
        let text = "data: héllo 👋\n\n"
        for size in 1...4 {
            #expect(Self.parse(text, chunk: size).events == [ServerSentEvent(id: nil, data: "héllo 👋")])
        }
    }

    @Test func nothingIsDispatchedWithoutData() {
        let (events, parser) = Self.parse("id: 3\nevent: typing\n\n: ping\n\n", chunk: 4096)
        #expect(events.isEmpty)
        #expect(parser.lastEventID == "3")
        #expect(parser.comments == 1)
    }

    @Test func anUnfinishedEventWaitsForItsBlankLine() {
        var parser = EventStreamParser()
        #expect(parser.parse(Array("id: 1\ndata: x\n".utf8)).isEmpty)
        #expect(parser.parse(Array("\n".utf8)) == [ServerSentEvent(id: "1", data: "x")])
    }

    @Test func fieldRules() {
        // One space after the colon is dropped, a second is kept; a field
        // without a colon has an empty value; unknown fields are ignored;
        // an empty data line counts; retry takes digits only; an id with
        // NUL is ignored; the event type resets after each dispatch.
        let text = "data:  two spaces\nfoo: bar\ndata\n\n"
            + "retry: 1500\nevent: x\ndata: a\n\n"
            + "retry: soon\nid: bad\u{0}id\ndata: b\n\n"
        let (events, parser) = Self.parse(text, chunk: 4096)
        #expect(events == [
            ServerSentEvent(id: nil, data: " two spaces\n"),
            ServerSentEvent(id: nil, type: "x", data: "a"),
            ServerSentEvent(id: nil, data: "b"),
        ])
        #expect(parser.retry == .milliseconds(1500))
    }

    @Test func aByteOrderMarkAtTheStartIsSkipped() {
        let (events, _) = Self.parse("\u{FEFF}data: x\n\n", chunk: 1)
        #expect(events == [ServerSentEvent(id: nil, data: "x")])
    }

    @Test func anEmptyIDClearsTheLastOne() {
        let (events, parser) = Self.parse("id: 5\ndata: a\n\nid\ndata: b\n\n", chunk: 4096)
        #expect(events.map(\.id) == ["5", ""])
        #expect(parser.lastEventID == "")
    }
}
