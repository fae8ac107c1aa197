#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A forward-only reader over a JSON document's bytes that materialises only
/// what the caller asks for and skips the rest.
///
/// The load tool must cost the server more than it costs itself: decoding an
/// 18 KB page into 50 structs with `JSONDecoder` takes longer than the server
/// takes to build it. The checks need ids, flags and a few strings, so this
/// walks the document once, without allocating, and the caller picks keys.
/// It validates structure (brackets, strings, literals), not full RFC 8259
/// number syntax: the server under test is checked, not parsed leniently.
///
/// ```swift
/// try body.withUnsafeBufferPointer { bytes in
///     var cursor = JSONCursor(bytes)
///     try cursor.forEachMember { key, cursor in
///         if key.equals("version") { version = try cursor.readInt() } else { try cursor.skipValue() }
///     }
/// }
/// ```
struct JSONCursor {
    let bytes: UnsafeBufferPointer<UInt8>
    private(set) var index: Int = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    /// A key as it appears between the quotes (escapes left as they are:
    /// the contract's keys are plain ASCII).
    struct Key {
        let bytes: UnsafeBufferPointer<UInt8>
        let range: Range<Int>

        @inline(__always)
        func equals(_ literal: StaticString) -> Bool {
            guard literal.utf8CodeUnitCount == range.count else { return false }
            let start = literal.utf8Start
            var i = 0
            for position in range {
                if bytes[position] != start[i] { return false }
                i += 1
            }
            return true
        }
    }

    // MARK: - Structure

    /// Calls `body` for each member of the object at the cursor; `body` must
    /// consume the member's value (read or skip it).
    mutating func forEachMember(_ body: (Key, inout JSONCursor) throws(ScanError) -> Void) throws(ScanError) {
        skipWhitespace()
        try expect(UInt8(ascii: "{"))
        skipWhitespace()
        if peek() == UInt8(ascii: "}") { index += 1; return }
        while true {
            skipWhitespace()
            let range = try readStringRange()
            skipWhitespace()
            try expect(UInt8(ascii: ":"))
            skipWhitespace()
            try body(Key(bytes: bytes, range: range), &self)
            skipWhitespace()
            switch next() {
            case UInt8(ascii: ","): continue
            case UInt8(ascii: "}"): return
            default: throw ScanError.malformed(at: index)
            }
        }
    }

    /// Calls `body` for each element of the array at the cursor.
    mutating func forEachElement(_ body: (inout JSONCursor) throws(ScanError) -> Void) throws(ScanError) {
        skipWhitespace()
        try expect(UInt8(ascii: "["))
        skipWhitespace()
        if peek() == UInt8(ascii: "]") { index += 1; return }
        while true {
            skipWhitespace()
            try body(&self)
            skipWhitespace()
            switch next() {
            case UInt8(ascii: ","): continue
            case UInt8(ascii: "]"): return
            default: throw ScanError.malformed(at: index)
            }
        }
    }

    // MARK: - Values

    mutating func readInt() throws(ScanError) -> Int64 {
        skipWhitespace()
        var negative = false
        if peek() == UInt8(ascii: "-") { negative = true; index += 1 }
        var value: Int64 = 0
        var digits = 0
        while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(Int64(bytes[index] - UInt8(ascii: "0")))
            guard !overflow1, !overflow2 else { throw ScanError.malformed(at: index) }
            value = sum
            digits += 1
            index += 1
        }
        guard digits > 0 else { throw ScanError.malformed(at: index) }
        return negative ? -value : value
    }

    /// An integer, or nil for `null`.
    mutating func readOptionalInt() throws(ScanError) -> Int64? {
        skipWhitespace()
        if peek() == UInt8(ascii: "n") { try expectLiteral("null"); return nil }
        return try readInt()
    }

    mutating func readBool() throws(ScanError) -> Bool {
        skipWhitespace()
        switch peek() {
        case UInt8(ascii: "t"): try expectLiteral("true"); return true
        case UInt8(ascii: "f"): try expectLiteral("false"); return false
        default: throw ScanError.malformed(at: index)
        }
    }

    /// The raw bytes between a string's quotes, or nil for `null`.
    mutating func readOptionalStringRange() throws(ScanError) -> Range<Int>? {
        skipWhitespace()
        if peek() == UInt8(ascii: "n") { try expectLiteral("null"); return nil }
        return try readStringRange()
    }

    /// A string value decoded, escapes included (rare: error codes, client ids).
    mutating func readString() throws(ScanError) -> String {
        let range = try readStringRange()
        let raw = UnsafeBufferPointer(rebasing: bytes[range])
        guard raw.contains(UInt8(ascii: "\\")) else { return String(decoding: raw, as: UTF8.self) }
        return JSONCursor.unescape(raw)
    }

    mutating func skipValue() throws(ScanError) {
        skipWhitespace()
        switch peek() {
        case UInt8(ascii: "{"):
            try forEachMember { _, cursor throws(ScanError) in try cursor.skipValue() }
        case UInt8(ascii: "["):
            try forEachElement { cursor throws(ScanError) in try cursor.skipValue() }
        case UInt8(ascii: "\""):
            _ = try readStringRange()
        case UInt8(ascii: "t"): try expectLiteral("true")
        case UInt8(ascii: "f"): try expectLiteral("false")
        case UInt8(ascii: "n"): try expectLiteral("null")
        default:
            let start = index
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "+"),
                     UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"):
                    index += 1
                    continue
                default: break
                }
                break
            }
            guard index > start else { throw ScanError.malformed(at: index) }
        }
    }

    /// Fails unless only whitespace is left: a truncated or padded body is a
    /// server bug worth reporting.
    mutating func expectEnd() throws(ScanError) {
        skipWhitespace()
        guard index == bytes.count else { throw ScanError.malformed(at: index) }
    }

    // MARK: - Bytes

    @inline(__always)
    private func peek() -> UInt8 { index < bytes.count ? bytes[index] : 0 }

    @inline(__always)
    private mutating func next() -> UInt8 {
        guard index < bytes.count else { return 0 }
        defer { index += 1 }
        return bytes[index]
    }

    @inline(__always)
    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    private mutating func expect(_ byte: UInt8) throws(ScanError) {
        guard next() == byte else { throw ScanError.malformed(at: index) }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(ScanError) {
        let count = literal.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw ScanError.malformed(at: index) }
        for offset in 0..<count where bytes[index + offset] != literal.utf8Start[offset] {
            throw ScanError.malformed(at: index)
        }
        index += count
    }

    /// Skips a string, honouring backslash escapes; returns what is between the quotes.
    ///
    /// Bodies make up most of a page's bytes, so the closing quote is found
    /// with `memchr` (vectorised in libc), then confirmed unescaped by
    /// counting the backslashes before it: an even count means a real quote.
    private mutating func readStringRange() throws(ScanError) -> Range<Int> {
        try expect(UInt8(ascii: "\""))
        let start = index
        guard let base = bytes.baseAddress else { throw ScanError.malformed(at: index) }
        var position = index
        while position < bytes.count {
            guard let found = memchr(base + position, Int32(UInt8(ascii: "\"")), bytes.count - position) else { break }
            let quote = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
            var backslashes = 0
            var before = quote - 1
            while before >= start && bytes[before] == UInt8(ascii: "\\") {
                backslashes += 1
                before -= 1
            }
            if backslashes % 2 == 0 {
                index = quote + 1
                return start..<quote
            }
            position = quote + 1
        }
        throw ScanError.malformed(at: bytes.count)
    }

    private static func unescape(_ raw: UnsafeBufferPointer<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(raw.count)
        var i = 0
        while i < raw.count {
            let byte = raw[i]
            guard byte == UInt8(ascii: "\\"), i + 1 < raw.count else { out.append(byte); i += 1; continue }
            let escaped = raw[i + 1]
            i += 2
            switch escaped {
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "u") where i + 4 <= raw.count:
                let hex = String(decoding: UnsafeBufferPointer(rebasing: raw[i..<(i + 4)]), as: UTF8.self)
                i += 4
                if let scalar = UInt32(hex, radix: 16).flatMap(Unicode.Scalar.init) {
                    out += Array(String(Character(scalar)).utf8)
                }
            default: out.append(escaped)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// The response body is not the JSON the contract promises.
enum ScanError: Error, Hashable {
    case malformed(at: Int)
    case missingField(String)
}
