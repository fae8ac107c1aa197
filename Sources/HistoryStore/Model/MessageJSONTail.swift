/// A message's JSON object from `"sender"` to its closing brace, byte for
/// byte as the API's `JSONWriter` writes it, so that the SQLite store can
/// keep it beside each row (`messages.json_tail`) and a page copies it.
///
/// Why: decoding a row's nine columns, building its record and escaping
/// and formatting it again on every read was the one slice of a deep page
/// large enough to move its time past this machine's noise (about a fifth
/// of the server's CPU per page, docs/performance.md, "Stored JSON"). A
/// message is written a few times in its life and read on every page that
/// shows it, so the work moves to the writes.
///
/// Why only the tail: the page writes `{"id":…,"conversation_id":…,` itself.
/// The id is in the row's key and the conversation's id is the page's, so
/// neither needs storing, and the tail holds no value the row does not.
///
/// Why a second writer of the same bytes rather than the API's: the store
/// cannot depend on the HTTP layer, and this one runs once per write, not
/// in a page's loop, so it is plain code. `StoredJSONIdentityTests` holds
/// the two to the same bytes over every escape, both booleans, both kinds
/// of absent value and the extreme times; a difference would show a client
/// other bytes for the same message depending on the page it came in.
package enum MessageJSONTail {
    /// The tail of `message` (its id and conversation are not in it), or
    /// nil when a time lies outside the years 0 to 9999 that the RFC 3339
    /// form can write: `Timestamp` clamps those years, so the stored bytes
    /// could not be read back as the row's values. Such a row (only a file
    /// written by other means holds one) is read whole.
    package static func encode(_ message: Message) -> String? {
        guard representable.contains(message.createdAt.millisecondsSinceEpoch),
              message.editedAt.map({ representable.contains($0.millisecondsSinceEpoch) }) ?? true
        else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(200 + message.sender.utf8.count + message.body.utf8.count + (message.clientID?.utf8.count ?? 0))
        append(#""sender":"#, to: &bytes)
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
        append(message.deleted ? "true" : "false", to: &bytes)
        append(#","reply_to":"#, to: &bytes)
        append(message.replyTo.map { String($0) } ?? "null", to: &bytes)
        append(#","client_id":"#, to: &bytes)
        if let clientID = message.clientID { appendString(clientID, to: &bytes) } else { append("null", to: &bytes) }
        append(#","version":"#, to: &bytes)
        append(String(message.version), to: &bytes)
        bytes.append(UInt8(ascii: "}"))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The milliseconds whose RFC 3339 year is 0 to 9999.
    package static let representable: ClosedRange<Int64> =
        Timestamp.daysSinceEpoch(year: 0, month: 1, day: 1) * 86_400_000
        ... Timestamp.daysSinceEpoch(year: 10_000, month: 1, day: 1) * 86_400_000 - 1

    // MARK: - Writing

    private static func append(_ text: StaticString, to bytes: inout [UInt8]) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    private static func append(_ text: String, to bytes: inout [UInt8]) {
        bytes.append(contentsOf: text.utf8)
    }

    /// A JSON string literal escaped as the API's `ByteCursor.writeString`
    /// escapes: quote and backslash, `\n`, `\r`, `\t`, other control
    /// characters as `\u00xx` in lower case, every other byte as it is.
    private static func appendString(_ text: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                bytes.append(UInt8(ascii: "\\"))
                bytes.append(byte)
            case 0x0A: bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "n"))
            case 0x0D: bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "r"))
            case 0x09: bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "t"))
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                                          hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            default:
                bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    // MARK: - Reading back

    /// The message `id` of `conversationID` whose tail `encode` wrote; nil
    /// for any other bytes (a file edited by other means). Only for callers
    /// that want `Message` values from a page (`MessageRows.message(at:)`);
    /// the page path copies the bytes and never reads them.
    package static func decode(_ bytes: UnsafeBufferPointer<UInt8>, id: Int64,
                               conversationID: ConversationID) -> Message? {
        var reader = Reader(bytes: bytes)
        guard reader.expect(#""sender":"#), let sender = reader.string(),
              reader.expect(#","body":"#), let body = reader.string(),
              reader.expect(#","created_at":"#), let createdAt = reader.timestamp(),
              reader.expect(#","edited_at":"#)
        else { return nil }
        var editedAt: Timestamp?
        if !reader.expect("null") {
            guard let time = reader.timestamp() else { return nil }
            editedAt = time
        }
        guard reader.expect(#","deleted":"#) else { return nil }
        let deleted: Bool
        if reader.expect("true") { deleted = true } else if reader.expect("false") { deleted = false } else { return nil }
        guard reader.expect(#","reply_to":"#) else { return nil }
        var replyTo: Int64?
        if !reader.expect("null") {
            guard let value = reader.integer() else { return nil }
            replyTo = value
        }
        guard reader.expect(#","client_id":"#) else { return nil }
        var clientID: String?
        if !reader.expect("null") {
            guard let value = reader.string() else { return nil }
            clientID = value
        }
        guard reader.expect(#","version":"#), let version = reader.integer(), reader.expect("}"), reader.atEnd
        else { return nil }
        return Message(id: id, conversationID: conversationID, sender: sender, body: body, createdAt: createdAt,
                       editedAt: editedAt, deleted: deleted, replyTo: replyTo, clientID: clientID, version: version)
    }

    /// A strict reader of exactly what `encode` writes.
    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        var atEnd: Bool { index == bytes.count }

        mutating func expect(_ literal: StaticString) -> Bool {
            let count = literal.utf8CodeUnitCount
            guard bytes.count - index >= count else { return false }
            for offset in 0..<count where bytes[index + offset] != literal.utf8Start[offset] { return false }
            index += count
            return true
        }

        mutating func string() -> String? {
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
            index += 1
            var utf8: [UInt8] = []
            while index < bytes.count {
                let byte = bytes[index]
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    return String(validating: utf8, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    guard index < bytes.count else { return nil }
                    let escape = bytes[index]
                    index += 1
                    switch escape {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"): utf8.append(escape)
                    case UInt8(ascii: "n"): utf8.append(0x0A)
                    case UInt8(ascii: "r"): utf8.append(0x0D)
                    case UInt8(ascii: "t"): utf8.append(0x09)
                    case UInt8(ascii: "u"):
                        guard bytes.count - index >= 4 else { return nil }
                        var value: UInt8 = 0
                        for offset in 0..<4 {
                            guard let digit = Self.hexDigit(bytes[index + offset]) else { return nil }
                            guard offset >= 2 || digit == 0 else { return nil }
                            value = value &* 16 &+ digit
                        }
                        guard value < 0x20 else { return nil }
                        index += 4
                        utf8.append(value)
                    default:
                        return nil
                    }
                case 0..<0x20:
                    return nil
                default:
                    utf8.append(byte)
                }
            }
            return nil
        }

        mutating func timestamp() -> Timestamp? {
            let length = Timestamp.rfc3339Length + 2
            guard bytes.count - index >= length, bytes[index] == UInt8(ascii: "\""),
                  bytes[index + length - 1] == UInt8(ascii: "\"")
            else { return nil }
            let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[(index + 1)..<(index + length - 1)]), as: UTF8.self)
            index += length
            return Timestamp(rfc3339: text)
        }

        mutating func integer() -> Int64? {
            let start = index
            if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            return Int64(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self))
        }

        private static func hexDigit(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
            default: nil
            }
        }
    }
}
