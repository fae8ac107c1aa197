import Foundation

/// One event of a `text/event-stream` body, dispatched at its blank line.
public struct ServerSentEvent: Hashable, Sendable {
    /// The stream's last event id when this event was dispatched: the
    /// event's own `id:`, else the one before it (the spec's "last event ID
    /// buffer"), nil when the stream never named one. What `Last-Event-ID`
    /// resumes after.
    public var id: String?
    /// The `event:` field; `message` when the event named none.
    public var type: String
    /// The `data:` lines joined with line feeds.
    public var data: String

    public init(id: String?, type: String = "message", data: String) {
        self.id = id
        self.type = type
        self.data = data
    }
}

/// Reads the event-stream format (WHATWG HTML, "Server-sent events",
/// section 9.2.6) from bytes as they arrive, in chunks cut anywhere: in the
/// middle of a line, of a UTF-8 character, or between the CR and LF of a
/// line end.
///
/// Lines end with CRLF, LF or CR. A line starting with `:` is a comment
/// (the server's heartbeat): it dispatches nothing but is counted in
/// ``comments``, so a reader knows the connection is alive. `data:` lines
/// accumulate, joined by `\n`; `id:` sets the last event id (one holding a
/// NUL is ignored); `retry:` with only digits sets ``retry``; unknown fields
/// are ignored. A blank line dispatches the event unless no `data:` was
/// seen. One space after the colon is not part of the value. A byte-order
/// mark at the very start is skipped.
///
/// A value: it holds at most one unfinished line and one unfinished event.
public struct EventStreamParser: Sendable {
    /// The `id:` to resume after: survives events without an `id:` field.
    public private(set) var lastEventID: String?
    /// The server's `retry:` reconnection time, if it sent one.
    public private(set) var retry: Duration?
    /// Comment lines seen so far (heartbeats).
    public private(set) var comments = 0

    private var line: [UInt8] = []
    /// The previous chunk ended with CR: an LF opening this one belongs to it.
    private var afterCR = false
    private var atStart = true
    private var eventType = ""
    private var data = ""
    private var hasData = false

    public init(lastEventID: String? = nil) {
        self.lastEventID = lastEventID
    }

    /// Parses `chunk` and returns the events it completed, in order.
    public mutating func parse<Bytes: Sequence>(_ chunk: Bytes) -> [ServerSentEvent] where Bytes.Element == UInt8 {
        var events: [ServerSentEvent] = []
        for byte in chunk {
            if afterCR {
                afterCR = false
                if byte == 0x0A { continue }
            }
            switch byte {
            case 0x0A:
                endLine(into: &events)
            case 0x0D:
                afterCR = true
                endLine(into: &events)
            default:
                line.append(byte)
            }
        }
        return events
    }

    private mutating func endLine(into events: inout [ServerSentEvent]) {
        var bytes = line[...]
        line.removeAll(keepingCapacity: true)
        if atStart {
            atStart = false
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        }
        if bytes.isEmpty {
            dispatch(into: &events)
            return
        }
        if bytes.first == UInt8(ascii: ":") {
            comments += 1
            return
        }
        let name: String
        var value: ArraySlice<UInt8>
        if let colon = bytes.firstIndex(of: UInt8(ascii: ":")) {
            value = bytes[(colon + 1)...]
            if value.first == UInt8(ascii: " ") { value = value.dropFirst() }
            name = String(decoding: bytes[..<colon], as: UTF8.self)
        } else {
            value = []
            name = String(decoding: bytes, as: UTF8.self)
        }
        let text = String(decoding: value, as: UTF8.self)
        switch name {
        case "event":
            eventType = text
        case "data":
            data += text
            data += "\n"
            hasData = true
        case "id":
            if !value.contains(0) { lastEventID = text }
        case "retry":
            if !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let milliseconds = Int64(text) {
                retry = .milliseconds(milliseconds)
            }
        default:
            break
        }
    }

    private mutating func dispatch(into events: inout [ServerSentEvent]) {
        defer {
            eventType = ""
            data = ""
            hasData = false
        }
        guard hasData else { return }
        if data.hasSuffix("\n") { data.removeLast() }
        events.append(ServerSentEvent(id: lastEventID, type: eventType.isEmpty ? "message" : eventType, data: data))
    }
}
