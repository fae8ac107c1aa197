import HistoryStore

/// Writes the contract's JSON shapes straight into a byte buffer.
///
/// By hand, because a page is the hot path (issue 5 wants 15,000 deep pages
/// per second on two cores): no `JSONEncoder`, no reflection, no
/// intermediate `String`; times through `Timestamp.appendRFC3339`, integers
/// digit by digit, and strings copied in runs between the bytes that need
/// escaping. Every key is always present, `null` where a value is absent
/// (the brief's shapes).
///
/// ```swift
/// let body = JSONWriter.page(page)   // {"messages":[...],"has_older":...}
/// ```
public enum JSONWriter {
    // MARK: - Documents

    public static func message(_ message: Message) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(estimatedSize(of: message))
        appendMessage(message, to: &bytes)
        return bytes
    }

    public static func conversation(_ conversation: Conversation) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256 + (conversation.title?.utf8.count ?? 0) * 2)
        append(#"{"id":"#, to: &bytes)
        appendString(conversation.id.rawValue, to: &bytes)
        append(#","title":"#, to: &bytes)
        appendOptionalString(conversation.title, to: &bytes)
        append(#","created_at":""#, to: &bytes)
        conversation.createdAt.appendRFC3339(to: &bytes)
        append(#"","message_count":"#, to: &bytes)
        appendInteger(conversation.messageCount, to: &bytes)
        append(#","oldest_id":"#, to: &bytes)
        appendOptionalInteger(conversation.oldestID, to: &bytes)
        append(#","newest_id":"#, to: &bytes)
        appendOptionalInteger(conversation.newestID, to: &bytes)
        append(#","version":"#, to: &bytes)
        appendInteger(conversation.version, to: &bytes)
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    public static func page(_ page: Page) -> [UInt8] {
        var bytes: [UInt8] = []
        var capacity = 192
        for message in page.messages { capacity += estimatedSize(of: message) }
        bytes.reserveCapacity(capacity)
        append(#"{"messages":["#, to: &bytes)
        var first = true
        for message in page.messages {
            if !first { bytes.append(UInt8(ascii: ",")) }
            first = false
            appendMessage(message, to: &bytes)
        }
        append(#"],"has_older":"#, to: &bytes)
        appendBool(page.hasOlder, to: &bytes)
        append(#","has_newer":"#, to: &bytes)
        appendBool(page.hasNewer, to: &bytes)
        append(#","oldest_id":"#, to: &bytes)
        appendOptionalInteger(page.oldestID, to: &bytes)
        append(#","newest_id":"#, to: &bytes)
        appendOptionalInteger(page.newestID, to: &bytes)
        append(#","version":"#, to: &bytes)
        appendInteger(page.version, to: &bytes)
        if let anchor = page.anchor {
            append(#","anchor":{"id":"#, to: &bytes)
            appendInteger(anchor.id, to: &bytes)
            append(#","found":"#, to: &bytes)
            appendBool(anchor.found, to: &bytes)
            append(#","index":"#, to: &bytes)
            appendOptionalInteger(anchor.index.map(Int64.init), to: &bytes)
            bytes.append(UInt8(ascii: "}"))
        }
        if let reset = page.reset {
            append(#","reset":"#, to: &bytes)
            appendBool(reset, to: &bytes)
        }
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    public static func changeFeed(_ feed: ChangeFeed) -> [UInt8] {
        var bytes: [UInt8] = []
        var capacity = 96
        for event in feed.events { capacity += 48 + estimatedSize(of: event.message) }
        bytes.reserveCapacity(capacity)
        append(#"{"events":["#, to: &bytes)
        var first = true
        for event in feed.events {
            if !first { bytes.append(UInt8(ascii: ",")) }
            first = false
            append(#"{"version":"#, to: &bytes)
            appendInteger(event.version, to: &bytes)
            append(#","type":""#, to: &bytes)
            switch event.kind {
            case .created: append("created", to: &bytes)
            case .edited: append("edited", to: &bytes)
            case .deleted: append("deleted", to: &bytes)
            }
            append(#"","message":"#, to: &bytes)
            appendMessage(event.message, to: &bytes)
            bytes.append(UInt8(ascii: "}"))
        }
        append(#"],"has_more":"#, to: &bytes)
        appendBool(feed.hasMore, to: &bytes)
        append(#","version":"#, to: &bytes)
        appendInteger(feed.version, to: &bytes)
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    /// `{"status":"ok"}` for `/healthz`.
    public static let healthy: [UInt8] = Array(#"{"status":"ok"}"#.utf8)

    // MARK: - Pieces

    public static func appendMessage(_ message: Message, to bytes: inout [UInt8]) {
        append(#"{"id":"#, to: &bytes)
        appendInteger(message.id, to: &bytes)
        append(#","conversation_id":"#, to: &bytes)
        appendString(message.conversationID.rawValue, to: &bytes)
        append(#","sender":"#, to: &bytes)
        appendString(message.sender, to: &bytes)
        append(#","body":"#, to: &bytes)
        appendString(message.body, to: &bytes)
        append(#","created_at":""#, to: &bytes)
        message.createdAt.appendRFC3339(to: &bytes)
        append(#"","edited_at":"#, to: &bytes)
        if let editedAt = message.editedAt {
            bytes.append(UInt8(ascii: "\""))
            editedAt.appendRFC3339(to: &bytes)
            bytes.append(UInt8(ascii: "\""))
        } else {
            append("null", to: &bytes)
        }
        append(#","deleted":"#, to: &bytes)
        appendBool(message.deleted, to: &bytes)
        append(#","reply_to":"#, to: &bytes)
        appendOptionalInteger(message.replyTo, to: &bytes)
        append(#","client_id":"#, to: &bytes)
        appendOptionalString(message.clientID, to: &bytes)
        append(#","version":"#, to: &bytes)
        appendInteger(message.version, to: &bytes)
        bytes.append(UInt8(ascii: "}"))
    }

    /// Keys, punctuation and times take about 230 bytes; strings may grow
    /// by escaping, which only costs a reallocation when it happens.
    static func estimatedSize(of message: Message) -> Int {
        240 + message.conversationID.rawValue.utf8.count + message.sender.utf8.count
            + message.body.utf8.count + (message.clientID?.utf8.count ?? 0)
    }

    @inline(__always)
    static func append(_ literal: StaticString, to bytes: inout [UInt8]) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    static func appendBool(_ value: Bool, to bytes: inout [UInt8]) {
        value ? append("true", to: &bytes) : append("false", to: &bytes)
    }

    static func appendOptionalInteger(_ value: Int64?, to bytes: inout [UInt8]) {
        if let value { appendInteger(value, to: &bytes) } else { append("null", to: &bytes) }
    }

    static func appendOptionalString(_ value: String?, to bytes: inout [UInt8]) {
        if let value { appendString(value, to: &bytes) } else { append("null", to: &bytes) }
    }

    /// Decimal digits without `String(describing:)`; `Int64.min` included.
    public static func appendInteger(_ value: Int64, to bytes: inout [UInt8]) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[19 - count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[(20 - count)...]))
        }
    }

    /// A JSON string literal, escaped exactly as `HTTPCore.appendJSONString`
    /// escapes (quote, backslash, control characters), but copying each run
    /// of plain bytes with one `append(contentsOf:)` instead of byte by byte:
    /// message bodies are most of a page's bytes.
    public static func appendString(_ text: String, to bytes: inout [UInt8]) {
        var text = text
        text.withUTF8 { utf8 in
            bytes.append(UInt8(ascii: "\""))
            var runStart = 0
            var index = 0
            let count = utf8.count
            while index < count {
                // Eight bytes at a time while none needs escaping (most of a body).
                if index + 8 <= count,
                   !Self.mayNeedEscape(UnsafeRawPointer(utf8.baseAddress! + index).loadUnaligned(as: UInt64.self)) {
                    index += 8
                    continue
                }
                let byte = utf8[index]
                if byte >= 0x20 && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\") {
                    index += 1
                    continue
                }
                if runStart < index {
                    bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index]))
                }
                appendEscape(byte, to: &bytes)
                index += 1
                runStart = index
            }
            if runStart < count {
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<count]))
            }
            bytes.append(UInt8(ascii: "\""))
        }
    }

    /// True when one of the eight bytes may be a control character, `"` or
    /// `\\` (the classic "has zero byte" bit trick: exact for "none", may
    /// flag a byte after a real hit, which the byte loop then sorts out).
    @inline(__always)
    private static func mayNeedEscape(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let control = (word &- ones &* 0x20) & ~word & highs
        let quoteWord = word ^ (ones &* UInt64(UInt8(ascii: "\"")))
        let quote = (quoteWord &- ones) & ~quoteWord & highs
        let backslashWord = word ^ (ones &* UInt64(UInt8(ascii: "\\")))
        let backslash = (backslashWord &- ones) & ~backslashWord & highs
        return (control | quote | backslash) != 0
    }

    private static func appendEscape(_ byte: UInt8, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""): bytes.append(UInt8(ascii: "\""))
        case UInt8(ascii: "\\"): bytes.append(UInt8(ascii: "\\"))
        case 0x0A: bytes.append(UInt8(ascii: "n"))
        case 0x0D: bytes.append(UInt8(ascii: "r"))
        case 0x09: bytes.append(UInt8(ascii: "t"))
        default:
            let hex: StaticString = "0123456789abcdef"
            append("u00", to: &bytes)
            bytes.append(hex.utf8Start[Int(byte >> 4)])
            bytes.append(hex.utf8Start[Int(byte & 0xF)])
        }
    }
}
