import FuzzSupport
import HistoryAPI

// Fuzzes `QueryParameters`, `DecimalParser` and percent-decoding, which
// read every query string and path number.
//
// Properties, beyond "no trap":
// - every name the query holds is found, and its value is what a plain
//   re-implementation of the form-urlencoded rules gives: the decoded value
//   when given once and well-formed, an error when repeated or malformed;
// - percent-encoding any string and decoding it gives the string back;
// - the decimal parsers agree with `Int64(_:)` on strings of ASCII digits
//   and refuse everything else.

/// The code a malformed or repeated value is refused with (any will do here).
let invalid = ErrorCode.invalidLimit

/// The form-urlencoded reading, written the obvious way. It splits on
/// bytes, not Characters: `&` followed by a combining mark is one Character
/// but still two pairs.
func referencePairs(_ query: String) -> [(name: String?, value: Substring)] {
    query.utf8.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true).map { pair in
        let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
        let name = QueryParameters.percentDecoded(Substring(parts[0]), plusIsSpace: true)
        return (name, parts.count == 2 ? Substring(parts[1]) : "")
    }
}

/// Every byte as `%` and two lower-case hex digits, written into one
/// buffer: a String per byte cost more than the decoding under test.
func percentEncoded(_ text: String) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var encoded: [UInt8] = []
    encoded.reserveCapacity(text.utf8.count * 3)
    for byte in text.utf8 {
        encoded.append(UInt8(ascii: "%"))
        encoded.append(digits[Int(byte >> 4)])
        encoded.append(digits[Int(byte & 0x0F)])
    }
    return String(decoding: encoded, as: UTF8.self)
}

func checkQuery(_ query: String, pairs: [(name: String?, value: Substring)]) {
    let parameters = QueryParameters(query[...])
    // Each name's values, grouped in one pass (filtering the pairs once
    // per name made long queries quadratic in the harness itself).
    var valuesByName: [String: [Substring]] = [:]
    for pair in pairs {
        if let name = pair.name { valuesByName[name, default: []].append(pair.value) }
    }
    // Names with `%` or `+` after decoding are left out: the contract's
    // names are plain words, and `QueryParameters` first compares a name
    // undecoded, so `%` in a query matches the name "%" as written.
    for (name, values) in valuesByName where !name.utf8.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }) {
        fuzzCheck(parameters.contains(name), "\(name) is in the query but not found")
        let result = Result { () throws(APIError) in try parameters.value(name, invalid: invalid) }
        if values.count > 1 {
            fuzzCheck((try? result.get()) == nil, "\(name) given \(values.count) times was accepted")
        } else {
            let expected = QueryParameters.percentDecoded(values[0], plusIsSpace: true)
            fuzzCheck((try? result.get()) == expected, "\(name): \(String(describing: try? result.get())) instead of \(String(describing: expected))")
        }
    }
    // A name that is not there.
    let absent = "absent\u{1}name"
    if valuesByName[absent] == nil {
        fuzzCheck(!parameters.contains(absent) && (try? parameters.value(absent, invalid: invalid)) == .some(nil),
                  "a name not in the query was found")
    }
}

func checkPercentDecoding(_ text: String) {
    let encoded = percentEncoded(text)
    fuzzCheck(QueryParameters.percentDecoded(encoded[...], plusIsSpace: true) == text, "%-encoding of \(text.debugDescription) did not decode back")
    fuzzCheck(QueryParameters.percentDecoded(encoded.uppercased()[...], plusIsSpace: false) == text, "upper-case %-encoding did not decode back")
    if !text.utf8.contains(UInt8(ascii: "%")) && !text.utf8.contains(UInt8(ascii: "+")) {
        fuzzCheck(QueryParameters.percentDecoded(text[...], plusIsSpace: true) == text, "text without escapes changed")
    }
}

func checkDecimals(_ text: String) {
    let isDigits = !text.isEmpty && text.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    let expected = isDigits ? Int64(text) : nil
    fuzzCheck(DecimalParser.nonNegativeInt64(text) == expected, "nonNegativeInt64(\(text.debugDescription))")
    fuzzCheck(DecimalParser.positiveInt64(text) == expected.flatMap { $0 > 0 ? $0 : nil }, "positiveInt64(\(text.debugDescription))")
    if let duration = DecimalParser.seconds(text) {
        fuzzCheck(duration >= .zero && duration < .seconds(1_000_000_000), "seconds(\(text.debugDescription)) = \(duration)")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = LibFuzzer.bytes(data, size)
    let text = String(decoding: bytes, as: UTF8.self)
    let pairs = referencePairs(text)
    checkQuery(text, pairs: pairs)
    checkPercentDecoding(text)
    for pair in pairs.prefix(16) {
        checkDecimals(String(pair.value))
    }
    checkDecimals(text)
    return 0
}

LibFuzzer.run(testOneInput)
