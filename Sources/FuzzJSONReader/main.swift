import FuzzSupport
import StrictJSON

// Fuzzes `JSONReader`, which reads every request body.
//
// Properties, beyond "no trap, no hang, no stack overflow":
// - a value the reader accepts, written back out as JSON (every string
//   escaped differently from how it came in) and read again, is the same
//   value, and writing that again gives the same bytes;
// - a number's integer value agrees with its literal;
// - nesting past `JSONReader.maximumDepth` is refused, not recursed into.

/// Writes `value` as JSON with sorted keys, escaping every non-ASCII
/// scalar as `\u` (with surrogate pairs) so that the second read takes
/// paths the first one may not have.
func serialise(_ value: JSONValue, into bytes: inout [UInt8]) {
    switch value {
    case .null: bytes += Array("null".utf8)
    case .bool(let flag): bytes += Array((flag ? "true" : "false").utf8)
    case .number(let number): bytes += Array(number.literal.utf8)
    case .string(let text): serialise(text, into: &bytes)
    case .array(let elements):
        bytes.append(UInt8(ascii: "["))
        for (index, element) in elements.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            serialise(element, into: &bytes)
        }
        bytes.append(UInt8(ascii: "]"))
    case .object(let members):
        bytes.append(UInt8(ascii: "{"))
        for (index, key) in members.keys.sorted().enumerated() {
            if index > 0 { bytes += Array(" ,\n".utf8) }
            serialise(key, into: &bytes)
            bytes += Array(" : ".utf8)
            serialise(members[key]!, into: &bytes)
        }
        bytes.append(UInt8(ascii: "}"))
    }
}

func serialise(_ text: String, into bytes: inout [UInt8]) {
    bytes.append(UInt8(ascii: "\""))
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": bytes += Array(#"\""#.utf8)
        case "\\": bytes += Array(#"\\"#.utf8)
        case "/": bytes += Array(#"\/"#.utf8)
        case "\n": bytes += Array(#"\n"#.utf8)
        case " "..."~": bytes.append(UInt8(scalar.value))
        default:
            for unit in String(scalar).utf16 {
                bytes += Array("\\u".utf8) + Array(hex4(unit).utf8)
            }
        }
    }
    bytes.append(UInt8(ascii: "\""))
}

func hex4(_ unit: UInt16) -> String {
    let digits = String(unit, radix: 16, uppercase: unit % 2 == 0)
    return String(repeating: "0", count: 4 - digits.count) + digits
}

func depth(_ value: JSONValue) -> Int {
    switch value {
    case .array(let elements): 1 + (elements.map(depth).max() ?? 0)
    case .object(let members): 1 + (members.values.map(depth).max() ?? 0)
    default: 0
    }
}

func checkNumbers(_ value: JSONValue) {
    switch value {
    case .number(let number):
        if let integer = number.int64Value {
            fuzzCheck(number.isIntegerLiteral && Int64(number.literal) == integer,
                      "the literal \(number.literal) has the integer value \(integer)")
        } else if number.isIntegerLiteral {
            fuzzCheck(Int64(number.literal) == nil, "the integer literal \(number.literal) fits Int64 but has no int64Value")
        }
    case .array(let elements): elements.forEach(checkNumbers)
    case .object(let members): members.values.forEach(checkNumbers)
    default: break
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = LibFuzzer.bytes(data, size)
    guard let value = try? JSONReader.parse(bytes) else { return 0 }
    fuzzCheck(depth(value) <= JSONReader.maximumDepth, "a value nested \(depth(value)) deep was accepted")
    checkNumbers(value)

    var written: [UInt8] = []
    serialise(value, into: &written)
    let reread: JSONValue
    do {
        reread = try JSONReader.parse(written)
    } catch {
        fuzzCheck(false, "its own serialisation was refused (\(error)): \(String(decoding: written, as: UTF8.self))")
        return 0
    }
    fuzzCheck(reread == value, "re-read differently: \(value) became \(reread)")
    var rewritten: [UInt8] = []
    serialise(reread, into: &rewritten)
    fuzzCheck(rewritten == written, "written twice differently")
    return 0
}

LibFuzzer.run(testOneInput)
