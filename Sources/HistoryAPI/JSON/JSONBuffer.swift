import HistoryStore

/// A growing byte buffer that JSON is written into through a `ByteCursor`:
/// room is reserved for a bounded piece (one message, one document head),
/// then the piece is written with plain pointer stores.
///
/// Why not `[UInt8].append`: a page is about a thousand small pieces (keys,
/// integers, strings), and each `append` checks uniqueness and capacity and
/// goes through a generic path; in the page profile those appends were the
/// largest single cost after the kernel's. Here the checks happen once per
/// piece, against a bound that cannot be exceeded: the cursor knows where
/// the reserved room ends and each of its writes checks its worst case
/// (documented on the method) before the first store, once per call, not
/// per byte.
///
/// ```swift
/// var buffer = JSONBuffer(capacity: 4096)
/// buffer.write(atMost: 64) { cursor in cursor.write(#"{"id":"#); cursor.writeInteger(7) }
/// let bytes = buffer.finish()
/// ```
struct JSONBuffer {
    private var storage: [UInt8]
    private var count = 0

    /// The room is left as the allocator gave it, not zero-filled: only
    /// bytes a cursor wrote are ever read (`finish` drops the rest), and
    /// filling a page's buffer with zeros only to overwrite them was 4% of
    /// the instructions of a deep page (callgrind, docs/performance.md).
    init(capacity: Int) {
        storage = Self.unfilled(max(capacity, 64))
    }

    /// An array of `count` bytes whose contents are left undefined.
    private static func unfilled(_ count: Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: count) { _, initialized in initialized = count }
    }

    /// Runs `body` with a cursor over `atMost` bytes of room at the end; a
    /// write past that room stops the process before it stores anything.
    mutating func write(atMost: Int, _ body: (inout ByteCursor) -> Void) {
        if storage.count - count < atMost {
            grow(toHold: count + atMost)
        }
        let offset = count
        let written = storage.withUnsafeMutableBufferPointer { buffer -> Int in
            let start = buffer.baseAddress! + offset
            var cursor = ByteCursor(start, room: atMost)
            body(&cursor)
            return cursor.position - start
        }
        count += written
    }

    /// The bytes written so far: what a response budget is measured against.
    var byteCount: Int { count }

    /// Forgets everything written from `offset` on (a piece that did not fit).
    mutating func truncate(to offset: Int) {
        precondition(offset >= 0 && offset <= count, "truncating outside the written bytes")
        count = offset
    }

    /// Removes the written bytes in `range`, moving the later ones down:
    /// how a page that keeps its newest messages drops its oldest ones.
    mutating func remove(_ range: Range<Int>) {
        precondition(range.lowerBound >= 0 && range.upperBound <= count, "removing outside the written bytes")
        guard !range.isEmpty else { return }
        let tail = count - range.upperBound
        storage.withUnsafeMutableBufferPointer { buffer in
            let base = buffer.baseAddress!
            // `copyMemory` is a memmove: the regions may overlap.
            UnsafeMutableRawPointer(base + range.lowerBound).copyMemory(from: base + range.upperBound, byteCount: tail)
        }
        count -= range.count
    }

    /// At least doubles the room, copying only the bytes written.
    private mutating func grow(toHold needed: Int) {
        let written = count
        var bytes = Self.unfilled(max(needed, 2 * storage.count))
        bytes.withUnsafeMutableBufferPointer { target in
            storage.withUnsafeBufferPointer { source in
                target.baseAddress!.update(from: source.baseAddress!, count: written)
            }
        }
        storage = bytes
    }

    /// The bytes written, without the unused room; the buffer is left
    /// empty. The storage is swapped out first, so the array is uniquely
    /// referenced and shrinks in place: as a `consuming` method that
    /// trimmed `storage` itself, the caller's copy kept a second reference
    /// and the whole page was copied into a new array (4% of a page,
    /// callgrind).
    mutating func finish() -> [UInt8] {
        var bytes: [UInt8] = []
        swap(&bytes, &storage)
        bytes.removeLast(bytes.count - count)
        count = 0
        return bytes
    }
}

/// A write position in memory reserved by `JSONBuffer.write(atMost:)`.
/// Each method's comment gives the most it can write, which is what callers
/// add up for `atMost`; each checks that much against the room left before
/// it stores, so a wrong bound stops the process instead of overflowing.
struct ByteCursor {
    private(set) var position: UnsafeMutablePointer<UInt8>
    /// One past the last byte of the reserved room.
    private let end: UnsafeMutablePointer<UInt8>

    /// The most a quoted, escaped string of `utf8Count` bytes takes: quotes
    /// plus six bytes (`\u00XX`) for each byte in the worst case.
    static func stringBound(_ utf8Count: Int) -> Int { 2 + 6 * utf8Count }
    /// The most `writeInteger` takes: a sign and 19 digits.
    static let integerBound = 20

    init(_ position: UnsafeMutablePointer<UInt8>, room: Int) {
        precondition(room >= 0)
        self.position = position
        end = position + room
    }

    /// Stops the process unless `count` more bytes fit in the reserved room.
    @inline(__always)
    private func reserve(_ count: Int) {
        precondition(end - position >= count, "a JSON piece needs more bytes than its bound reserved")
    }

    /// Writes the literal's bytes (its length).
    @inline(__always)
    mutating func write(_ literal: StaticString) {
        reserve(literal.utf8CodeUnitCount)
        store(literal)
    }

    /// Writes one byte.
    @inline(__always)
    mutating func write(_ byte: UInt8) {
        reserve(1)
        store(byte)
    }

    /// Writes the bytes as they are (their count).
    @inline(__always)
    mutating func write(raw bytes: UnsafeBufferPointer<UInt8>) {
        reserve(bytes.count)
        store(raw: bytes)
    }

    // The stores below are unchecked: every caller reserved their room.

    @inline(__always)
    private mutating func store(_ literal: StaticString) {
        let count = literal.utf8CodeUnitCount
        position.update(from: literal.utf8Start, count: count)
        position += count
    }

    @inline(__always)
    private mutating func store(_ byte: UInt8) {
        position.pointee = byte
        position += 1
    }

    @inline(__always)
    private mutating func store(raw bytes: UnsafeBufferPointer<UInt8>) {
        guard let base = bytes.baseAddress else { return }
        position.update(from: base, count: bytes.count)
        position += bytes.count
    }

    /// `true` or `false` (at most 5).
    @inline(__always)
    mutating func writeBool(_ value: Bool) {
        value ? write("true") : write("false")
    }

    /// Decimal digits, `Int64.min` included (at most `integerBound`).
    ///
    /// Two digits per division, from a table of the pairs 00...99: a page
    /// writes about 200 integers, and one division per digit was 3% of its
    /// instructions (callgrind, docs/performance.md).
    mutating func writeInteger(_ value: Int64) {
        var magnitude = value.magnitude
        var digits = 1
        var scale: UInt64 = 10
        while digits < 20 && magnitude >= scale {
            digits += 1
            scale = scale &* 10
        }
        reserve(digits + (value < 0 ? 1 : 0))
        if value < 0 { store(UInt8(ascii: "-")) }
        let pairs = Self.digitPairs.utf8Start
        var index = digits
        while magnitude >= 100 {
            let pair = Int(truncatingIfNeeded: magnitude % 100) &* 2
            magnitude /= 100
            index -= 2
            position[index] = pairs[pair]
            position[index + 1] = pairs[pair + 1]
        }
        if magnitude >= 10 {
            let pair = Int(truncatingIfNeeded: magnitude) &* 2
            position[index - 2] = pairs[pair]
            position[index - 1] = pairs[pair + 1]
        } else {
            position[index - 1] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude)
        }
        position += digits
    }

    /// "00", "01", ... "99", back to back.
    private static let digitPairs: StaticString = """
        00010203040506070809101112131415161718192021222324252627282930313233343536373839\
        40414243444546474849505152535455565758596061626364656667686970717273747576777879\
        8081828384858687888990919293949596979899
        """

    /// The integer or `null` (at most `integerBound`).
    mutating func writeOptionalInteger(_ value: Int64?) {
        if let value { writeInteger(value) } else { write("null") }
    }

    /// A quoted RFC 3339 time (26).
    mutating func writeQuotedTimestamp(_ timestamp: Timestamp) {
        reserve(Timestamp.rfc3339Length + 2)
        store(UInt8(ascii: "\""))
        timestamp.writeRFC3339(to: position)
        position += Timestamp.rfc3339Length
        store(UInt8(ascii: "\""))
    }

    /// The same through `dates`, which remembers the last date written.
    mutating func writeQuotedTimestamp(_ timestamp: Timestamp, dates: inout RFC3339Dates) {
        reserve(Timestamp.rfc3339Length + 2)
        store(UInt8(ascii: "\""))
        dates.write(timestamp, to: position)
        position += Timestamp.rfc3339Length
        store(UInt8(ascii: "\""))
    }

    /// A JSON string literal of the UTF-8 bytes (at most `stringBound`),
    /// escaped exactly as `appendJSONString` escapes (quote,
    /// backslash, control characters), copying each run of plain bytes at
    /// once: message bodies are most of a page's bytes.
    ///
    /// The room is checked for what this string can still write, not for
    /// `stringBound` up front: the quotes and the bytes as they are first,
    /// then, at each byte that needs an escape, the escape and the rest.
    /// So a string with nothing to escape needs `2 + count` bytes, which is
    /// what the writers reserve for identifiers (`[A-Za-z0-9_.@-]` only);
    /// reserving `stringBound` for them stopped the server on a member
    /// whose user id was 32 bytes or more (found by schemathesis).
    mutating func writeString(_ utf8: UnsafeBufferPointer<UInt8>) {
        let count = utf8.count
        reserve(2 + count)
        store(UInt8(ascii: "\""))
        guard count > 0, let base = utf8.baseAddress else {
            store(UInt8(ascii: "\""))
            return
        }
        var runStart = 0
        var index = 0
        while index < count {
            // Sixteen bytes, as two words tested together, then eight at a
            // time while none needs escaping (most of a body).
            if index + 16 <= count {
                let raw = UnsafeRawPointer(base + index)
                if Self.escapeBits(raw.loadUnaligned(as: UInt64.self))
                    | Self.escapeBits(raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self)) == 0 {
                    index += 16
                    continue
                }
            }
            if index + 8 <= count,
               !Self.mayNeedEscape(UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)) {
                index += 8
                continue
            }
            let byte = base[index]
            if byte >= 0x20 && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\") {
                index += 1
                continue
            }
            // The run before it, this escape, the bytes after it as they
            // are, the closing quote: later escapes check again.
            reserve(index - runStart + Self.escapeLength(byte) + (count - index - 1) + 1)
            store(raw: UnsafeBufferPointer(start: base + runStart, count: index - runStart))
            storeEscape(byte)
            index += 1
            runStart = index
        }
        store(raw: UnsafeBufferPointer(start: base + runStart, count: count - runStart))
        store(UInt8(ascii: "\""))
    }

    /// `writeString` of a Swift string (its UTF-8 view, without copying a
    /// native string).
    mutating func writeString(_ text: String) {
        var text = text
        text.withUTF8 { writeString($0) }
    }

    /// True when one of the eight bytes may be a control character, `"` or
    /// `\\` (the classic "has zero byte" bit trick: exact for "none", may
    /// flag a byte after a real hit, which the byte loop then sorts out).
    @inline(__always)
    private static func mayNeedEscape(_ word: UInt64) -> Bool {
        escapeBits(word) != 0
    }

    /// Zero exactly when none of the eight bytes needs escaping.
    @inline(__always)
    private static func escapeBits(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let control = (word &- ones &* 0x20) & ~word & highs
        let quoteWord = word ^ (ones &* UInt64(UInt8(ascii: "\"")))
        let quote = (quoteWord &- ones) & ~quoteWord & highs
        let backslashWord = word ^ (ones &* UInt64(UInt8(ascii: "\\")))
        let backslash = (backslashWord &- ones) & ~backslashWord & highs
        return control | quote | backslash
    }

    /// What `storeEscape` writes for `byte`.
    @inline(__always)
    private static func escapeLength(_ byte: UInt8) -> Int {
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), 0x0A, 0x0D, 0x09: 2
        default: 6
        }
    }

    /// Two bytes for the short escapes, six for `\u00XX`.
    private mutating func storeEscape(_ byte: UInt8) {
        store(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""): store(UInt8(ascii: "\""))
        case UInt8(ascii: "\\"): store(UInt8(ascii: "\\"))
        case 0x0A: store(UInt8(ascii: "n"))
        case 0x0D: store(UInt8(ascii: "r"))
        case 0x09: store(UInt8(ascii: "t"))
        default:
            let hex: StaticString = "0123456789abcdef"
            store("u00")
            store(hex.utf8Start[Int(byte >> 4)])
            store(hex.utf8Start[Int(byte & 0xF)])
        }
    }
}
