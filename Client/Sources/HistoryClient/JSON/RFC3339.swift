import Foundation

/// The contract's timestamps: RFC 3339 in UTC with milliseconds,
/// `2026-11-21T10:00:00.123Z`.
///
/// Parsed and formatted by hand because `ISO8601DateFormatter` is not
/// `Sendable`, differs between Darwin and swift-corelibs-foundation in how it
/// treats fractional seconds, and costs microseconds per call while a page
/// carries up to 400 dates. Only the UTC form the server writes is accepted
/// (`Z`, or a `+00:00` offset that some proxies rewrite it to).
///
/// Related specification: <https://www.rfc-editor.org/rfc/rfc3339#section-5.6>
enum RFC3339 {
    /// `YYYY-MM-DDTHH:MM:SS[.fraction](Z|+00:00)`; nil for anything else.
    static func date(from text: String) -> Date? {
        guard let milliseconds = millisecondsSinceEpoch(from: text) else { return nil }
        return Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }

    static func millisecondsSinceEpoch(from text: String) -> Int64? {
        var bytes = Array(text.utf8)
        if bytes.count > 6, bytes.suffix(6).elementsEqual("+00:00".utf8) {
            bytes.removeLast(6)
            bytes.append(UInt8(ascii: "Z"))
        }
        func number(_ range: Range<Int>) -> Int64? {
            guard range.upperBound <= bytes.count, !range.isEmpty else { return nil }
            var value: Int64 = 0
            for index in range {
                let byte = bytes[index]
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int64(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard bytes.count >= 20,
              bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
              bytes[10] == UInt8(ascii: "T") || bytes[10] == UInt8(ascii: "t"),
              bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
              bytes.last == UInt8(ascii: "Z") || bytes.last == UInt8(ascii: "z"),
              let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
              (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var millisecond: Int64 = 0
        if bytes.count > 20 {
            // A fraction of any length; digits past the millisecond are dropped, as the server keeps none.
            guard bytes[19] == UInt8(ascii: "."), bytes.count >= 22 else { return nil }
            let fraction = 20..<(bytes.count - 1)
            guard fraction.allSatisfy({ bytes[$0] >= UInt8(ascii: "0") && bytes[$0] <= UInt8(ascii: "9") })
            else { return nil }
            var scale: Int64 = 100
            for index in fraction.prefix(3) {
                millisecond += Int64(bytes[index] - UInt8(ascii: "0")) * scale
                scale /= 10
            }
        }
        let days = daysSinceEpoch(year: year, month: month, day: day)
        return ((days * 24 + hour) * 60 + minute) * 60_000 + min(second, 59) * 1000 + millisecond
    }

    /// Always 24 ASCII characters for years 0...9999.
    static func string(from date: Date) -> String {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        return string(fromMillisecondsSinceEpoch: milliseconds)
    }

    static func string(fromMillisecondsSinceEpoch milliseconds: Int64) -> String {
        var days = milliseconds / 86_400_000
        var msOfDay = milliseconds % 86_400_000
        if msOfDay < 0 {
            days -= 1
            msOfDay += 86_400_000
        }
        let (year, month, day) = civilDate(daysSinceEpoch: days)
        func pad(_ value: Int64, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T"
            + "\(pad(msOfDay / 3_600_000, 2)):\(pad(msOfDay / 60_000 % 60, 2)):\(pad(msOfDay / 1000 % 60, 2))"
            + ".\(pad(msOfDay % 1000, 3))Z"
    }

    // MARK: - Calendar arithmetic (Howard Hinnant's days_from_civil / civil_from_days)
    // <https://howardhinnant.github.io/date_algorithms.html>

    private static func daysSinceEpoch(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func civilDate(daysSinceEpoch: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = daysSinceEpoch + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
