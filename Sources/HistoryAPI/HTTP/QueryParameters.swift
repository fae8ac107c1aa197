import HistoryStore

/// The query string of a request target, read the way the contract says:
/// `application/x-www-form-urlencoded` pairs (`+` is a space, `%XX` a byte),
/// unknown names ignored, a known name given twice refused.
///
/// Values are decoded only when a handler asks for them, so the pairs a
/// handler ignores cost nothing but a split.
///
/// ```swift
/// let query = QueryParameters(request.query)
/// let limit = try query.value("limit", invalid: .invalidLimit)
/// ```
public struct QueryParameters: Sendable {
    private let pairs: [(name: Substring, value: Substring)]

    public init(_ query: Substring?) {
        guard let query, !query.isEmpty else {
            pairs = []
            return
        }
        pairs = query.pieces(separatedBy: UInt8(ascii: "&"), omittingEmpty: true).map { pair in
            if let equals = pair.utf8.firstIndex(of: UInt8(ascii: "=")) {
                return (pair[..<equals], pair[pair.utf8.index(after: equals)...])
            }
            return (pair, pair[pair.endIndex...])
        }
    }

    /// The decoded value of `name`, nil when absent; `?name` alone is `""`.
    /// - Parameter invalid: the parameter's own code (`invalid_cursor`,
    ///   `invalid_limit`...) for a repeated name or a malformed `%` escape.
    public func value(_ name: String, invalid: ErrorCode) throws(APIError) -> String? {
        var found: Substring?
        for pair in pairs where Self.nameMatches(pair.name, name) {
            guard found == nil else { throw APIError(invalid, "\(name) is given more than once") }
            found = pair.value
        }
        guard let found else { return nil }
        guard let decoded = Self.percentDecoded(found, plusIsSpace: true) else {
            throw APIError(invalid, "\(name) has a malformed percent-encoding")
        }
        return decoded
    }

    /// The integer `rule` names, checked by it: nil when absent, and text
    /// that is no decimal integer breaks the rule in its own words.
    public func integer(_ rule: IntegerRule) throws(APIError) -> Int64? {
        guard let text = try value(rule.field.name, invalid: ErrorCode(invalid: rule.field)) else { return nil }
        guard let value = DecimalParser.nonNegativeInt64(text) else {
            throw APIError(rule.violation(given: abbreviated(text)))
        }
        return try APIError.enforcing { () throws(RuleViolation) in try rule.check(value) }
    }

    /// True when the query names `name` at least once.
    public func contains(_ name: String) -> Bool {
        pairs.contains { Self.nameMatches($0.name, name) }
    }

    private static func nameMatches(_ raw: Substring, _ name: String) -> Bool {
        if raw == name { return true }
        guard raw.utf8.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }) else { return false }
        return percentDecoded(raw, plusIsSpace: true) == name
    }

    /// Decodes `%XX` escapes (and `+` when `plusIsSpace`); nil when a `%` is
    /// not followed by two hex digits or the bytes are not valid UTF-8.
    public static func percentDecoded(_ text: Substring, plusIsSpace: Bool) -> String? {
        let utf8 = text.utf8
        guard utf8.contains(where: { $0 == UInt8(ascii: "%") || (plusIsSpace && $0 == UInt8(ascii: "+")) }) else {
            return String(text)
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count)
        var index = utf8.startIndex
        while index != utf8.endIndex {
            let byte = utf8[index]
            if byte == UInt8(ascii: "%") {
                let first = utf8.index(after: index)
                guard first != utf8.endIndex else { return nil }
                let second = utf8.index(after: first)
                guard second != utf8.endIndex,
                      let high = hexValue(utf8[first]), let low = hexValue(utf8[second]) else { return nil }
                bytes.append(high << 4 | low)
                index = utf8.index(after: second)
            } else {
                bytes.append(plusIsSpace && byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
                index = utf8.index(after: index)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

// MARK: - Numbers in query strings and paths

/// Strict decimal parsing for ids, cursors, limits and versions: ASCII
/// digits only (no sign, no space, no `0x`), and nil on overflow, so
/// `Int64.max + 1` is an error rather than a wrap or a clamp.
public enum DecimalParser {
    /// `0...Int64.max`, digits only; nil for anything else, `""` included.
    public static func nonNegativeInt64(_ text: some StringProtocol) -> Int64? {
        var value: Int64 = 0
        var any = false
        for byte in text.utf8 {
            guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else { return nil }
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (next, overflow2) = times10.addingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
            guard !overflow1 && !overflow2 else { return nil }
            value = next
            any = true
        }
        return any ? value : nil
    }

    /// `1...Int64.max`: the range of every id and cursor.
    public static func positiveInt64(_ text: some StringProtocol) -> Int64? {
        guard let value = nonNegativeInt64(text), value > 0 else { return nil }
        return value
    }

    /// `digits[.digits]` as a duration, to the nanosecond; nil for signs,
    /// exponents, a bare `.5` or `5.`, and anything too long to be sane.
    public static func seconds(_ text: some StringProtocol) -> Duration? {
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let whole = parts.first, whole.utf8.count <= 9, let seconds = nonNegativeInt64(whole) else { return nil }
        var nanoseconds: Int64 = 0
        if parts.count == 2 {
            let fraction = parts[1]
            guard !fraction.isEmpty, fraction.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
                return nil
            }
            // Digits past nanoseconds change nothing we can wait for.
            var scale: Int64 = 100_000_000
            for byte in fraction.utf8.prefix(9) {
                nanoseconds += Int64(byte - UInt8(ascii: "0")) * scale
                scale /= 10
            }
        }
        return .seconds(seconds) + .nanoseconds(nanoseconds)
    }
}
