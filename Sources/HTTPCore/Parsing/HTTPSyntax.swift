import Glibc

/// Byte classes and small scanners of RFC 9110/9112 grammar, shared by the
/// request parser (server) and the response parser (client).
enum HTTPSyntax {
    static let cr: UInt8 = 0x0D
    static let lf: UInt8 = 0x0A
    static let space: UInt8 = 0x20
    static let tab: UInt8 = 0x09
    static let colon: UInt8 = 0x3A
    static let comma: UInt8 = 0x2C
    static let semicolon: UInt8 = 0x3B

    /// `tchar` (RFC 9110 §5.6.2): the bytes a method or field name may hold.
    @inline(__always)
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
             UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
             UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    /// `field-vchar / SP / HTAB` (RFC 9110 §5.5): everything but control
    /// bytes, so NUL, bare CR and DEL in a value are refused.
    @inline(__always)
    static func isFieldValueByte(_ byte: UInt8) -> Bool {
        byte == tab || (byte >= 0x20 && byte != 0x7F)
    }

    @inline(__always)
    static func isWhitespace(_ byte: UInt8) -> Bool { byte == space || byte == tab }

    /// The value of one hex digit, or nil.
    @inline(__always)
    static func hexValue(_ byte: UInt8) -> Int? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): Int(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): Int(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): Int(byte - UInt8(ascii: "A") + 10)
        default: nil
        }
    }

    /// ASCII case-insensitive comparison of `bytes[range]` with `lowercase`,
    /// which must be lowercase already (a field name like `content-length`).
    @inline(__always)
    static func equalsIgnoringCase(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>,
                                   _ lowercase: StaticString) -> Bool {
        guard range.count == lowercase.utf8CodeUnitCount else { return false }
        let literal = lowercase.utf8Start
        var index = 0
        for position in range {
            var byte = bytes[position]
            if byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") { byte |= 0x20 }
            if byte != literal[index] { return false }
            index += 1
        }
        return true
    }

    /// `range` without leading and trailing spaces and tabs (OWS).
    @inline(__always)
    static func trimmed(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Range<Int> {
        var lower = range.lowerBound, upper = range.upperBound
        while lower < upper && isWhitespace(bytes[lower]) { lower += 1 }
        while upper > lower && isWhitespace(bytes[upper - 1]) { upper -= 1 }
        return lower..<upper
    }

    /// Calls `body` with each comma-separated element of a list-valued field
    /// (RFC 9110 §5.6.1), trimmed; empty elements are passed too.
    @inline(__always)
    static func forEachListElement(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>,
                                   _ body: (Range<Int>) throws(RequestParseError) -> Void) throws(RequestParseError) {
        var start = range.lowerBound
        var position = range.lowerBound
        while position <= range.upperBound {
            if position == range.upperBound || bytes[position] == comma {
                try body(trimmed(bytes, start..<position))
                start = position + 1
            }
            position += 1
        }
    }

    @inline(__always)
    static func forEachListElementNonThrowing(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>,
                                              _ body: (Range<Int>) -> Void) {
        var start = range.lowerBound
        var position = range.lowerBound
        while position <= range.upperBound {
            if position == range.upperBound || bytes[position] == comma {
                body(trimmed(bytes, start..<position))
                start = position + 1
            }
            position += 1
        }
    }

    /// The index of the first `byte` in `bytes[range]`, found with memchr.
    @inline(__always)
    static func firstIndex(of byte: UInt8, in bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Int? {
        guard !range.isEmpty, let base = bytes.baseAddress else { return nil }
        guard let found = memchr(base + range.lowerBound, Int32(byte), range.count) else { return nil }
        return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
    }

    static func string(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
    }
}

extension HTTPSyntax {
    /// Finds the end of a message head (the index after the LF of its empty
    /// line) in `bytes[start..<end]`, resuming at `scanned`, which it moves
    /// forward so a head arriving in pieces is scanned once. A bare LF ends
    /// a line as CR LF does (RFC 9112 §2.2).
    /// - Throws: `headTooLarge` as soon as the head, complete or not, is
    ///   longer than `limit`.
    static func findHeadEnd(_ bytes: UnsafeBufferPointer<UInt8>, start: Int, scanned: inout Int,
                            limit: Int) throws(RequestParseError) -> Int? {
        let end = bytes.count
        if scanned < start { scanned = start }
        while let lf = firstIndex(of: lf, in: bytes, scanned..<end) {
            scanned = lf + 1
            if (lf - 1 >= start && bytes[lf - 1] == HTTPSyntax.lf)
                || (lf - 2 >= start && bytes[lf - 1] == cr && bytes[lf - 2] == HTTPSyntax.lf) {
                if lf + 1 - start > limit { throw .headTooLarge }
                return lf + 1
            }
            if lf - start > limit { throw .headTooLarge }
        }
        scanned = end
        if end - start > limit { throw .headTooLarge }
        return nil
    }

    /// The line starting at `from` without its CR LF (or LF), and where the
    /// next line starts; `end` is known to follow an LF.
    @inline(__always)
    static func line(_ bytes: UnsafeBufferPointer<UInt8>, from: Int, end: Int) -> (Range<Int>, next: Int) {
        let lf = firstIndex(of: HTTPSyntax.lf, in: bytes, from..<end) ?? end - 1
        var lineEnd = lf
        if lineEnd > from && bytes[lineEnd - 1] == cr { lineEnd -= 1 }
        return (from..<lineEnd, lf + 1)
    }
}
