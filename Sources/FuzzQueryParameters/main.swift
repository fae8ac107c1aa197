import FuzzSupport
import HistoryAPI
import HistoryStore

// Fuzzes `QueryParameters`, `DecimalParser` and percent-decoding, which
// read every query string and path number.
//
// Properties, beyond "no trap":
// - every name the query holds (up to 8 per input, spread over a longer
//   query) is found, and its value is what a plain
//   re-implementation of the form-urlencoded rules gives: the decoded value
//   when given once and well-formed, an error when repeated or malformed;
// - percent-encoding any string and decoding it gives the string back;
// - the decimal parsers agree with `Int64(_:)` on strings of ASCII digits
//   and refuse everything else;
// - a page's query (`MessageRoutes.pageQuery`: cursors, limit, window,
//   `around_time`) is read without a trap, and what it accepts passes the
//   query's own rules;
// - a time `Timestamp(anyRFC3339:)` accepts is written back in the stored
//   form (years 0...9999) and read again as the same instant, and the
//   stored-form parser accepts nothing the other refuses.

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

/// Each lookup scans every pair, as it should for the few names a handler
/// asks for; looking up every name of a long query made an input cost the
/// square of its length (a release run fell below 4,000 inputs a second,
/// and kept falling, as inputs grew towards 3 KiB). A name written with
/// `%` or `+` is decoded again at every lookup, so even 32 names per input
/// kept it under 3,000. Up to this many names are checked per input, all
/// of them in shorter queries.
let maximumCheckedNames = 8

/// All of `items` when there are at most `count`, otherwise `count` of them
/// spread evenly from the first to the last.
func spreadSample<T>(_ items: [T], count: Int) -> [T] {
    guard items.count > count else { return items }
    return (0..<count).map { items[$0 * (items.count - 1) / (count - 1)] }
}

func checkQuery(_ query: String, pairs: [(name: String?, value: Substring)]) {
    let parameters = QueryParameters(query[...])
    // Each name's values, grouped in one pass (filtering the pairs once
    // per name made long queries quadratic in the harness itself), and the
    // names in the order they first appear.
    var valuesByName: [String: [Substring]] = [:]
    var names: [String] = []
    for pair in pairs {
        guard let name = pair.name else { continue }
        if valuesByName[name] == nil { names.append(name) }
        valuesByName[name, default: []].append(pair.value)
    }
    // Names with `%` or `+` after decoding are left out: the contract's
    // names are plain words, and `QueryParameters` first compares a name
    // undecoded, so `%` in a query matches the name "%" as written.
    names.removeAll { name in name.utf8.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }) }
    for name in spreadSample(names, count: maximumCheckedNames) {
        let values = valuesByName[name]!
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

func checkPageQuery(_ query: String) {
    guard let page = try? MessageRoutes.pageQuery(QueryParameters(query[...])) else { return }
    fuzzCheck((try? page.check()) != nil, "pageQuery accepted \(query.debugDescription), which breaks its rules")
}

func checkTime(_ text: String) {
    let stored = Timestamp(rfc3339: text)
    guard let time = Timestamp(anyRFC3339: text) else {
        fuzzCheck(stored == nil, "rfc3339 accepted \(text.debugDescription), anyRFC3339 did not")
        return
    }
    if let stored { fuzzCheck(stored == time, "the two parsers read \(text.debugDescription) differently") }
    let written = time.rfc3339
    if (-62_167_219_200_000...253_402_300_799_999).contains(time.millisecondsSinceEpoch) {
        fuzzCheck(Timestamp(rfc3339: written) == time, "\(text.debugDescription) -> \(written) did not read back")
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
    checkPageQuery(text)
    for pair in pairs.prefix(4) {
        checkTime(QueryParameters.percentDecoded(pair.value, plusIsSpace: true) ?? "")
    }
    checkTime(text)
    return 0
}

LibFuzzer.run(testOneInput)
