/// A strict JSON parser (RFC 8259) for request bodies.
///
/// Strict because a body is untrusted input and the contract promises
/// "JSON in parsed strictly": the text must be valid UTF-8 (no overlong
/// forms, no encoded surrogates, nothing past U+10FFFF), strings may not hold
/// raw control characters, every `\u` surrogate must be paired, one value
/// only with nothing but whitespace after it, no duplicate keys (which of two
/// values would win is exactly the ambiguity an attacker probes), and nesting
/// is capped so a body of 60,000 `[` cannot exhaust the stack.
///
/// ```swift
/// let value = try JSONReader.parse(Array(#"{"sender":"ana"}"#.utf8))
/// ```
///
/// Related specification: <https://www.rfc-editor.org/rfc/rfc8259>
public enum JSONReader {
    /// Arrays and objects nested deeper than this are refused. Our bodies
    /// are flat objects; 64 leaves room for any honest client.
    public static let maximumDepth = 64

    /// Parses exactly one JSON value from `bytes`.
    /// - Throws: `JSONReadError` naming the byte offset of the first problem.
    public static func parse(_ bytes: [UInt8]) throws(JSONReadError) -> JSONValue {
        let result: Result<JSONValue, JSONReadError> = bytes.withUnsafeBufferPointer { buffer in
            var parser = Parser(bytes: buffer)
            do throws(JSONReadError) {
                return .success(try parser.parseDocument())
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }
}

/// Why a body is not acceptable JSON, and where.
public struct JSONReadError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Zero-based byte offset into the body.
    public var offset: Int
    public var reason: String

    public init(offset: Int, reason: String) {
        self.offset = offset
        self.reason = reason
    }

    public var description: String { "\(reason) at byte \(offset)" }
}

// MARK: - Parser

private struct Parser {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0
    var depth = 0
    /// Reused for strings with escapes or multi-byte characters.
    var scratch: [UInt8] = []

    init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    mutating func parseDocument() throws(JSONReadError) -> JSONValue {
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF {
            throw fail("a byte order mark is not allowed")
        }
        skipWhitespace()
        guard index < bytes.count else { throw fail(bytes.isEmpty ? "the body is empty" : "no JSON value") }
        let value = try parseValue()
        skipWhitespace()
        guard index == bytes.count else { throw fail("unexpected data after the JSON value") }
        return value
    }

    // MARK: Values

    mutating func parseValue() throws(JSONReadError) -> JSONValue {
        guard index < bytes.count else { throw fail("unexpected end of input, a value was expected") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        case let byte: throw fail(byte >= 0x80 ? "non-ASCII byte outside a string" : "unexpected character '\(printable(byte))'")
        }
    }

    mutating func parseObject() throws(JSONReadError) -> JSONValue {
        try enterContainer()
        index += 1  // {
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if peek() == UInt8(ascii: "}") {
            index += 1
            depth -= 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard peek() == UInt8(ascii: "\"") else { throw fail("an object key (a string) was expected") }
            let keyOffset = index
            let key = try parseString()
            skipWhitespace()
            guard peek() == UInt8(ascii: ":") else { throw fail("':' was expected after an object key") }
            index += 1
            skipWhitespace()
            let value = try parseValue()
            if members.updateValue(value, forKey: key) != nil {
                throw JSONReadError(offset: keyOffset, reason: "duplicate key \"\(key)\"")
            }
            skipWhitespace()
            switch peek() {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"):
                index += 1
                depth -= 1
                return .object(members)
            case nil: throw fail("unexpected end of input inside an object")
            default: throw fail("',' or '}' was expected in an object")
            }
        }
    }

    mutating func parseArray() throws(JSONReadError) -> JSONValue {
        try enterContainer()
        index += 1  // [
        var elements: [JSONValue] = []
        skipWhitespace()
        if peek() == UInt8(ascii: "]") {
            index += 1
            depth -= 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue())
            skipWhitespace()
            switch peek() {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"):
                index += 1
                depth -= 1
                return .array(elements)
            case nil: throw fail("unexpected end of input inside an array")
            default: throw fail("',' or ']' was expected in an array")
            }
        }
    }

    mutating func enterContainer() throws(JSONReadError) {
        depth += 1
        if depth > JSONReader.maximumDepth {
            throw fail("nesting deeper than \(JSONReader.maximumDepth) levels")
        }
    }

    mutating func expectLiteral(_ literal: StaticString) throws(JSONReadError) {
        let start = index
        let count = literal.utf8CodeUnitCount
        let expected = UnsafeBufferPointer(start: literal.utf8Start, count: count)
        guard bytes.count - index >= count, (0..<count).allSatisfy({ bytes[start + $0] == expected[$0] }) else {
            throw fail("invalid literal, '\(literal)' was expected")
        }
        index += count
    }

    // MARK: Numbers

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`, RFC 8259 §6.
    mutating func parseNumber() throws(JSONReadError) -> JSONNumber {
        let start = index
        var negative = false
        if peek() == UInt8(ascii: "-") {
            negative = true
            index += 1
        }
        // Accumulated as a negative number so Int64.min fits too.
        var accumulator: Int64 = 0
        var fits = true
        guard let first = peek(), isDigit(first) else { throw fail("a digit was expected in a number") }
        if first == UInt8(ascii: "0") {
            index += 1
            if let next = peek(), isDigit(next) { throw fail("leading zeros are not allowed in a number") }
        } else {
            while let byte = peek(), isDigit(byte) {
                if fits {
                    let (times10, overflow1) = accumulator.multipliedReportingOverflow(by: 10)
                    let (next, overflow2) = times10.subtractingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
                    if overflow1 || overflow2 { fits = false } else { accumulator = next }
                }
                index += 1
            }
        }
        var isInteger = true
        if peek() == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            guard let byte = peek(), isDigit(byte) else { throw fail("a digit was expected after '.'") }
            while let byte = peek(), isDigit(byte) { index += 1 }
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { index += 1 }
            guard let byte = peek(), isDigit(byte) else { throw fail("a digit was expected in an exponent") }
            while let byte = peek(), isDigit(byte) { index += 1 }
        }
        var value: Int64?
        if isInteger && fits {
            if negative {
                value = accumulator
            } else if accumulator != .min {
                value = -accumulator
            }
        }
        let literal = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        return JSONNumber(literal: literal, isIntegerLiteral: isInteger, int64Value: value)
    }

    // MARK: Strings

    mutating func parseString() throws(JSONReadError) -> String {
        index += 1  // opening quote
        let start = index
        // Fast path: plain ASCII with no escape is copied in one go.
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
                index += 1
                return text
            }
            if byte == UInt8(ascii: "\\") || byte >= 0x80 || byte < 0x20 { break }
            index += 1
        }
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return String(decoding: scratch, as: UTF8.self)
            case UInt8(ascii: "\\"):
                try parseEscape()
            case 0x00..<0x20:
                throw fail("a control character must be escaped in a string")
            case 0x20..<0x80:
                scratch.append(byte)
                index += 1
            default:
                try copyMultiByteCharacter()
            }
        }
        throw fail("unexpected end of input inside a string")
    }

    mutating func parseEscape() throws(JSONReadError) {
        let escapeStart = index
        index += 1  // backslash
        guard let byte = peek() else { throw fail("unexpected end of input in an escape") }
        index += 1
        switch byte {
        case UInt8(ascii: "\""): scratch.append(UInt8(ascii: "\""))
        case UInt8(ascii: "\\"): scratch.append(UInt8(ascii: "\\"))
        case UInt8(ascii: "/"): scratch.append(UInt8(ascii: "/"))
        case UInt8(ascii: "b"): scratch.append(0x08)
        case UInt8(ascii: "f"): scratch.append(0x0C)
        case UInt8(ascii: "n"): scratch.append(0x0A)
        case UInt8(ascii: "r"): scratch.append(0x0D)
        case UInt8(ascii: "t"): scratch.append(0x09)
        case UInt8(ascii: "u"):
            let unit = try parseHex4()
            var scalar = UInt32(unit)
            switch unit {
            case 0xD800...0xDBFF:
                guard bytes.count - index >= 6, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                    throw JSONReadError(offset: escapeStart, reason: "a high surrogate escape must be followed by a low surrogate escape")
                }
                index += 2
                let low = try parseHex4()
                guard (0xDC00...0xDFFF).contains(low) else {
                    throw JSONReadError(offset: escapeStart, reason: "a high surrogate escape must be followed by a low surrogate escape")
                }
                scalar = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
            case 0xDC00...0xDFFF:
                throw JSONReadError(offset: escapeStart, reason: "a lone low surrogate escape")
            default:
                break
            }
            appendUTF8(scalar)
        default:
            throw JSONReadError(offset: escapeStart, reason: "invalid escape '\\\(printable(byte))'")
        }
    }

    mutating func parseHex4() throws(JSONReadError) -> UInt16 {
        guard bytes.count - index >= 4 else { throw fail("a \\u escape needs four hex digits") }
        var value: UInt16 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw fail("a \\u escape needs four hex digits")
            }
            value = value << 4 | UInt16(digit)
            index += 1
        }
        return value
    }

    mutating func appendUTF8(_ scalar: UInt32) {
        switch scalar {
        case 0..<0x80:
            scratch.append(UInt8(scalar))
        case 0x80..<0x800:
            scratch.append(UInt8(0xC0 | scalar >> 6))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        case 0x800..<0x10000:
            scratch.append(UInt8(0xE0 | scalar >> 12))
            scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        default:
            scratch.append(UInt8(0xF0 | scalar >> 18))
            scratch.append(UInt8(0x80 | scalar >> 12 & 0x3F))
            scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        }
    }

    /// Copies one well-formed UTF-8 sequence (Unicode Table 3-7), refusing
    /// overlong forms, encoded surrogates and anything past U+10FFFF.
    mutating func copyMultiByteCharacter() throws(JSONReadError) {
        let lead = bytes[index]
        let count: Int
        var secondRange: ClosedRange<UInt8> = 0x80...0xBF
        switch lead {
        case 0xC2...0xDF: count = 2
        case 0xE0: count = 3; secondRange = 0xA0...0xBF
        case 0xE1...0xEC, 0xEE...0xEF: count = 3
        case 0xED: count = 3; secondRange = 0x80...0x9F
        case 0xF0: count = 4; secondRange = 0x90...0xBF
        case 0xF1...0xF3: count = 4
        case 0xF4: count = 4; secondRange = 0x80...0x8F
        default: throw fail("invalid UTF-8")
        }
        guard bytes.count - index >= count else { throw fail("invalid UTF-8 (truncated sequence)") }
        guard secondRange.contains(bytes[index + 1]) else { throw fail("invalid UTF-8") }
        for offset in 2..<count where !(0x80...0xBF).contains(bytes[index + offset]) {
            throw fail("invalid UTF-8")
        }
        scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[index..<(index + count)]))
        index += count
    }

    // MARK: Helpers

    func peek() -> UInt8? {
        index < bytes.count ? bytes[index] : nil
    }

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    func fail(_ reason: String) -> JSONReadError {
        JSONReadError(offset: index, reason: reason)
    }

    func printable(_ byte: UInt8) -> String {
        (0x21..<0x7F).contains(byte) ? String(UnicodeScalar(byte)) : "\\x" + String(byte, radix: 16, uppercase: true)
    }
}
