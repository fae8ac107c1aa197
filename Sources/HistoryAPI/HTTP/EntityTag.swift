import HTTPCore
import HistoryStore

/// The strong `ETag` of a GET's answer, and the `If-None-Match` test
/// (docs/API.md, "Conditional requests and compression").
///
/// A tag need only tell apart the answers of one URL, but each also holds
/// what names its resource (the conversation id, the message id), so a
/// client that sends one resource's tag with another's URL gets a 200.
///
/// What a tag is made of, per answer:
/// - a page of messages: the conversation's `version` (bumped by every
///   append, edit and delete, and written in the page's own `version`
///   field), the query (cursor, limit, window) and the response budget.
///   A 304 is decided from the conversation's kept counters, one O(1) row
///   read with the caller's access decided in the same snapshot: no
///   message is read or encoded. Since the page shows `version`, an append
///   changes every page of the conversation, deep `before` pages too: their
///   bytes change, so a strong tag must.
/// - a conversation: its `version` (its other fields change only with it;
///   the title never changes).
/// - one message: its id and its own `version` (`message(_:gzip:)`, for
///   `GET /v1/conversations/{cid}/messages/{id}`).
/// - a members page, an inbox page: a hash of the JSON (FNV-1a 64). No kept
///   counter covers them, so a 304 still reads and encodes the page, and
///   spares only the bytes on the wire.
///
/// The coding: gzip and identity bodies are different representations, so
/// a strong tag must differ (RFC 9110 §8.8.3). The tag names what the
/// request accepts, not what was sent: `-gz` when it accepts gzip, even for
/// an answer under 1 KiB sent as identity (two tags for the same bytes are
/// allowed, one tag for two byte sequences is not). So the 304 is decided
/// before the body's size is known. Answers carry `Vary: Accept-Encoding`.
///
/// Every tag also holds `formatGeneration`, bumped when the JSON writers
/// change what they write for the same data, so a new server never
/// confirms an old server's bytes.
struct EntityTag: Hashable, Sendable {
    /// The field value, quotes included: `"m42-0123456789abcdef"`.
    let value: String

    private static let formatGeneration: Int64 = 1

    /// A page of `query` at the conversation's `version`.
    static func page(of conversation: ConversationID, version: Int64, query: PageQuery, budget: Int,
                     gzip: Bool) -> EntityTag {
        var hasher = FNV1a64()
        hasher.combine(formatGeneration)
        hasher.combine(string: conversation.rawValue)
        switch query.cursor {
        case .newest: hasher.combine(0)
        case .before(let id): hasher.combine(1); hasher.combine(id)
        case .after(let id): hasher.combine(2); hasher.combine(id)
        case .between(let after, let before): hasher.combine(3); hasher.combine(after); hasher.combine(before)
        case .around(let id): hasher.combine(4); hasher.combine(id)
        case .aroundTime(let time): hasher.combine(5); hasher.combine(time.millisecondsSinceEpoch)
        }
        hasher.combine(Int64(query.limit))
        hasher.combine(Int64(query.window ?? -1))
        hasher.combine(Int64(budget))
        return EntityTag(kind: "m", number: version, hash: hasher.value, gzip: gzip)
    }

    static func conversation(_ conversation: Conversation, gzip: Bool) -> EntityTag {
        Self.conversation(conversation.id, version: conversation.version, gzip: gzip)
    }

    /// The conversation's own answer: its counters move with its version,
    /// and its title never changes.
    static func conversation(_ id: ConversationID, version: Int64, gzip: Bool) -> EntityTag {
        var hasher = FNV1a64()
        hasher.combine(formatGeneration)
        hasher.combine(string: id.rawValue)
        return EntityTag(kind: "c", number: version, hash: hasher.value, gzip: gzip)
    }

    /// One message (the route `GET /v1/conversations/{cid}/messages/{id}`
    /// takes this): an edit or a delete bumps the message's `version`.
    static func message(_ message: Message, gzip: Bool) -> EntityTag {
        var hasher = FNV1a64()
        hasher.combine(formatGeneration)
        hasher.combine(message.id)
        return EntityTag(kind: "e", number: message.version, hash: hasher.value, gzip: gzip)
    }

    /// Any JSON answer, by its bytes (before compression).
    static func body(_ json: [UInt8], gzip: Bool) -> EntityTag {
        var hasher = FNV1a64()
        hasher.combine(formatGeneration)
        hasher.combine(json)
        return EntityTag(kind: "h", number: Int64(json.count), hash: hasher.value, gzip: gzip)
    }

    /// `"<kind><number>-<16 hex digits>[-gz]"`, written as bytes: the
    /// interpolation of four pieces cost more than the hash (callgrind).
    private init(kind: StaticString, number: Int64, hash: UInt64, gzip: Bool) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(48)
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: UnsafeBufferPointer(start: kind.utf8Start, count: kind.utf8CodeUnitCount))
        JSONWriter.appendInteger(number, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        let digits: StaticString = "0123456789abcdef"
        for shift in stride(from: 60, through: 0, by: -4) {
            bytes.append(digits.utf8Start[Int((hash >> UInt64(shift)) & 0xF)])
        }
        if gzip {
            bytes.append(UInt8(ascii: "-"))
            bytes.append(UInt8(ascii: "g"))
            bytes.append(UInt8(ascii: "z"))
        }
        bytes.append(UInt8(ascii: "\""))
        value = String(decoding: bytes, as: UTF8.self)
    }

    /// RFC 9110 §13.1.2: true when `If-None-Match` is `*` or lists this tag
    /// (weak comparison: `W/"x"` matches `"x"`). A field that does not
    /// parse matches nothing past the point where it stops parsing.
    func isMatched(byIfNoneMatchIn headers: HTTPHeaders) -> Bool {
        guard headers["If-None-Match"] != nil else { return false }
        let tag = Array(value.utf8)
        for field in headers.values(of: "If-None-Match") {
            let bytes = Array(field.utf8)
            var index = 0
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: ","):
                    index += 1
                case UInt8(ascii: "*"):
                    return true
                default:
                    if bytes[index] == UInt8(ascii: "W"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "/") {
                        index += 2
                    }
                    guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { index = bytes.count; break }
                    guard let close = bytes[(index + 1)...].firstIndex(of: UInt8(ascii: "\"")) else { index = bytes.count; break }
                    if bytes[index...close].elementsEqual(tag) { return true }
                    index = close + 1
                }
            }
        }
        return false
    }
}

extension FNV1a64 {
    mutating func combine(_ value: Int64) {
        withUnsafeBytes(of: value.littleEndian) { combine(raw: $0) }
    }

    /// The string's UTF-8 bytes, as `combine(string.utf8)` hashes them.
    mutating func combine(string: String) {
        var string = string
        string.withUTF8 { combine(raw: UnsafeRawBufferPointer($0)) }
    }
}
