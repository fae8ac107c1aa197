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

func percentEncoded(_ text: String) -> String {
    text.utf8.map { byte in
        let hex = String(byte, radix: 16)
        return "%" + (hex.count == 1 ? "0" + hex : hex)
    }.joined()
}

func checkQuery(_ query: String) {
    let parameters = QueryParameters(query[...])
    let pairs = referencePairs(query)
    // Names with `%` or `+` after decoding are left out: the contract's
    // names are plain words, and `QueryParameters` first compares a name
    // undecoded, so `%` in a query matches the name "%" as written.
    for name in Set(pairs.compactMap(\.name)) where !name.utf8.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }) {
        let values = pairs.filter { $0.name == name }.map(\.value)
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
    if !pairs.contains(where: { $0.name == absent }) {
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
    checkQuery(text)
    checkPercentDecoding(text)
    for pair in referencePairs(text).prefix(16) {
        checkDecimals(String(pair.value))
    }
    checkDecimals(text)
    return 0
}

LibFuzzer.run(testOneInput)
