/// What the tail readers need of an `events` response: per event its type,
/// message id and `client_id` (which carries the post's send time), and the
/// `version` to poll from next. The backend feed (`GET /v1/events`) has the
/// same shape with `activity` for `version`, and member events without a
/// message (``scan(_:feed:)``).
struct EventsSummary {
    struct Event {
        var version: Int64
        var type: Kind
        var messageID: Int64
        var clientID: String?
    }

    enum Kind: UInt8 { case created, edited, deleted, unknown }

    var events: [Event] = []
    var hasMore = false
    var version: Int64 = 0

    /// Which feed answered: a conversation's (cursor `version`, every event
    /// carries a message) or the backend's (cursor `activity`; member events
    /// carry none and get message id 0).
    enum Feed { case conversation, server }

    mutating func scan(_ body: [UInt8], feed: Feed = .conversation) throws(ScanError) {
        let messagesRequired = feed == .conversation
        let cursorKey: StaticString = messagesRequired ? "version" : "activity"
        events.removeAll(keepingCapacity: true)
        var summary = self
        defer { self = summary }
        var sawVersion = false
        try body.withUnsafeBufferPointer { (bytes) throws(ScanError) in
            var cursor = JSONCursor(bytes)
            try cursor.forEachMember { key, cursor throws(ScanError) in
                if key.equals("events") {
                    try cursor.forEachElement { element throws(ScanError) in
                        var event = Event(version: -1, type: .unknown, messageID: -1, clientID: nil)
                        try element.forEachMember { field, value throws(ScanError) in
                            if field.equals(cursorKey) {
                                event.version = try value.readInt()
                            } else if field.equals("type") {
                                let type = try value.readString()
                                event.type = switch type {
                                case "created": .created
                                case "edited": .edited
                                case "deleted": .deleted
                                default: .unknown
                                }
                            } else if field.equals("message") {
                                try value.forEachMember { messageField, messageValue throws(ScanError) in
                                    if messageField.equals("id") {
                                        event.messageID = try messageValue.readInt()
                                    } else if messageField.equals("client_id") {
                                        if let range = try messageValue.readOptionalStringRange() {
                                            event.clientID = String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
                                        }
                                    } else {
                                        try messageValue.skipValue()
                                    }
                                }
                            } else {
                                try value.skipValue()
                            }
                        }
                        guard event.version >= 0, event.messageID > 0 || !messagesRequired else { throw ScanError.missingField("events[]") }
                        event.messageID = max(event.messageID, 0)
                        summary.events.append(event)
                    }
                } else if key.equals("has_more") {
                    summary.hasMore = try cursor.readBool()
                } else if key.equals(cursorKey) {
                    sawVersion = true
                    summary.version = try cursor.readInt()
                } else {
                    try cursor.skipValue()
                }
            }
            try cursor.expectEnd()
        }
        if !sawVersion { throw ScanError.missingField(messagesRequired ? "version" : "activity") }
    }
}

/// Small scans of other bodies: an appended message's id, a conversation's
/// counters, an error's code.
enum BodyScan {
    /// The top-level integer fields named in `keys` (absent or null: nil).
    static func integers(_ body: [UInt8], _ keys: [StaticString]) throws(ScanError) -> [Int64?] {
        var values = [Int64?](repeating: nil, count: keys.count)
        try body.withUnsafeBufferPointer { (bytes) throws(ScanError) in
            var cursor = JSONCursor(bytes)
            try cursor.forEachMember { key, cursor throws(ScanError) in
                for (i, name) in keys.enumerated() where key.equals(name) {
                    values[i] = try cursor.readOptionalInt()
                    return
                }
                try cursor.skipValue()
            }
        }
        return values
    }

    /// `error.code` of the contract's error body, or nil when the body is not one.
    static func errorCode(_ body: [UInt8]) -> String? {
        var code: String?
        try? body.withUnsafeBufferPointer { (bytes) throws(ScanError) in
            var cursor = JSONCursor(bytes)
            try cursor.forEachMember { key, cursor throws(ScanError) in
                guard key.equals("error") else { try cursor.skipValue(); return }
                try cursor.forEachMember { field, value throws(ScanError) in
                    if field.equals("code") { code = try value.readString() } else { try value.skipValue() }
                }
            }
        }
        return code
    }
}
