import Testing
@testable import StrictJSON

@Suite("JSONReader")
struct JSONReaderTests {
    private func parse(_ text: String) throws(JSONReadError) -> JSONValue {
        try JSONReader.parse(Array(text.utf8))
    }

    private func parseBytes(_ bytes: [UInt8]) throws(JSONReadError) -> JSONValue {
        try JSONReader.parse(bytes)
    }

    private func integer(_ literal: String, _ value: Int64?) -> JSONValue {
        .number(JSONNumber(literal: literal, isIntegerLiteral: true, int64Value: value))
    }

    @Test func parsesAnObjectWithEveryKindOfValue() throws {
        let value = try parse(#" {"s":"a\"b\\c\/d\b\f\n\r\t","n":-12,"f":1.5e3,"t":true,"x":false,"z":null,"a":[1,[],{}],"o":{"k":"v"}} "#)
        guard case .object(let fields) = value else {
            Issue.record("not an object: \(value)")
            return
        }
        #expect(fields["s"] == .string("a\"b\\c/d\u{08}\u{0C}\n\r\t"))
        #expect(fields["n"] == integer("-12", -12))
        #expect(fields["f"] == .number(JSONNumber(literal: "1.5e3", isIntegerLiteral: false, int64Value: nil)))
        #expect(fields["t"] == .bool(true))
        #expect(fields["x"] == .bool(false))
        #expect(fields["z"] == .null)
        #expect(fields["a"] == .array([integer("1", 1), .array([]), .object([:])]))
        #expect(fields["o"] == .object(["k": .string("v")]))
    }

    @Test func decodesUnicodeEscapesAndSurrogatePairs() throws {
        #expect(try parse(#""\u00e9\u4E2D\ud83d\ude00\u0000""#) == .string("é中😀\u{0}"))
        #expect(try parse("\"é中😀\"") == .string("é中😀"))
        #expect(try parse(#""plain ascii""#) == .string("plain ascii"))
    }

    @Test(arguments: [
        #""\ud83d""#, #""\ud83dx""#, #""\ude00""#, #""\ud83d\u0041""#, #""\u12""#, #""\uZZZZ""#, #""\x""#, #""\"#,
    ])
    func refusesBadEscapes(_ text: String) {
        #expect(throws: JSONReadError.self) { try parse(text) }
    }

    @Test func integersKeepTheirExactValue() throws {
        #expect(try parse("9223372036854775807") == integer("9223372036854775807", .max))
        #expect(try parse("-9223372036854775808") == integer("-9223372036854775808", .min))
        #expect(try parse("9223372036854775808") == integer("9223372036854775808", nil))
        #expect(try parse("-9223372036854775809") == integer("-9223372036854775809", nil))
        #expect(try parse("-0") == integer("-0", 0))
        #expect(try parse("1.0") == .number(JSONNumber(literal: "1.0", isIntegerLiteral: false, int64Value: nil)))
    }

    @Test func hugeNumbersAndExponentsDoNotCrash() throws {
        let huge = String(repeating: "9", count: 5000)
        guard case .number(let number) = try parse(huge) else {
            Issue.record("not a number")
            return
        }
        #expect(number.int64Value == nil)
        #expect(number.doubleValue == .infinity)
        guard case .number(let exponent) = try parse("1e999999999999999999") else {
            Issue.record("not a number")
            return
        }
        #expect(exponent.int64Value == nil)
        #expect(!exponent.isIntegerLiteral)
    }

    @Test(arguments: [
        "", " ", "01", "-", "1.", ".5", "1e", "1e+", "+1", "0x10", "NaN", "Infinity", "tru", "nul", "[1,]", "[,1]",
        #"{"a":1,}"#, #"{"a" 1}"#, #"{a:1}"#, #"{'a':1}"#, #"{"a":1"#, "[1", #""abc"#, "{} {}", "{}x", "[1]]",
        "\"a\u{01}b\"", "\"tab\there\"", "{\"a\":1}\u{0}",
    ])
    func refusesMalformedText(_ text: String) {
        #expect(throws: JSONReadError.self) { try parse(text) }
    }

    @Test(arguments: [
        [0x22, 0xC0, 0xAF, 0x22],             // overlong "/"
        [0x22, 0xE0, 0x80, 0xAF, 0x22],       // overlong 3-byte
        [0x22, 0xF0, 0x80, 0x80, 0xAF, 0x22], // overlong 4-byte
        [0x22, 0xED, 0xA0, 0x80, 0x22],       // encoded surrogate U+D800
        [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], // past U+10FFFF
        [0x22, 0xFF, 0x22],                   // never valid
        [0x22, 0x80, 0x22],                   // lone continuation
        [0x22, 0xC3, 0x22],                   // truncated
        [0x22, 0xE4, 0xB8],                   // truncated at end
        [0xEF, 0xBB, 0xBF, 0x7B, 0x7D],       // byte order mark
        [0x7B, 0xC3, 0xA9, 0x7D],             // non-ASCII outside a string
    ] as [[UInt8]])
    func refusesInvalidUTF8(_ bytes: [UInt8]) {
        #expect(throws: JSONReadError.self) { try parseBytes(bytes) }
    }

    @Test func acceptsEveryUTF8LengthAtItsLimits() throws {
        // U+0080, U+07FF, U+0800, U+FFFF, U+10000, U+10FFFF
        let bytes: [UInt8] = [0x22, 0xC2, 0x80, 0xDF, 0xBF, 0xE0, 0xA0, 0x80, 0xEF, 0xBF, 0xBF,
                              0xF0, 0x90, 0x80, 0x80, 0xF4, 0x8F, 0xBF, 0xBF, 0x22]
        #expect(try parseBytes(bytes) == .string("\u{80}\u{7FF}\u{800}\u{FFFF}\u{10000}\u{10FFFF}"))
    }

    @Test func refusesDuplicateKeysNamingThem() {
        #expect(throws: JSONReadError(offset: 8, reason: #"duplicate key "a""#)) { try parse(#"{"a":1, "a":2}"#) }
        // Escapes make the same key: still a duplicate.
        #expect(throws: JSONReadError.self) { try parse(#"{"a":1,"\u0061":2}"#) }
    }

    @Test func capsNestingDepth() throws {
        let depth = JSONReader.maximumDepth
        _ = try parse(String(repeating: "[", count: depth) + String(repeating: "]", count: depth))
        #expect(throws: JSONReadError.self) { try parse(String(repeating: "[", count: 100_000)) }
        let deepObject = String(repeating: #"{"a":"#, count: depth + 1) + "1" + String(repeating: "}", count: depth + 1)
        #expect(throws: JSONReadError.self) { try parse(deepObject) }
    }

    @Test func errorsNameTheByteOffset() {
        #expect(throws: JSONReadError(offset: 6, reason: "unexpected data after the JSON value")) { try parse("{}    x") }
        #expect(throws: JSONReadError(offset: 0, reason: "the body is empty")) { try parse("") }
    }
}
