import Foundation

/// A point in time with millisecond precision, as the contract writes it:
/// RFC 3339 UTC with milliseconds, `2026-11-21T10:00:00.123Z`.
///
/// Stored as milliseconds since the Unix epoch (an INTEGER column sorts and
/// compares cheaply); formatted by hand because `ISO8601DateFormatter` costs
/// microseconds per call and a page formats up to 400 of them.
public struct Timestamp: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let millisecondsSinceEpoch: Int64

    public init(millisecondsSinceEpoch: Int64) {
        self.millisecondsSinceEpoch = millisecondsSinceEpoch
    }

    /// The current wall-clock time.
    public static func now() -> Timestamp {
        Timestamp(millisecondsSinceEpoch: Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)))
    }

    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool {
        lhs.millisecondsSinceEpoch < rhs.millisecondsSinceEpoch
    }

    /// `YYYY-MM-DDTHH:MM:SS.mmmZ`, always 24 ASCII bytes for years 0...9999.
    public var rfc3339: String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        appendRFC3339(to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    public var description: String { rfc3339 }

    /// The length of the RFC 3339 form: `YYYY-MM-DDTHH:MM:SS.mmmZ`.
    public static let rfc3339Length = 24

    /// Appends the RFC 3339 form to a byte buffer without building a String.
    public func appendRFC3339(to bytes: inout [UInt8]) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Self.rfc3339Length) { text in
            writeRFC3339(to: text.baseAddress!)
            bytes.append(contentsOf: UnsafeBufferPointer(text))
        }
    }

    /// Writes the RFC 3339 form, exactly `rfc3339Length` bytes, at `text`.
    ///
    /// Into memory the caller reserved: a page writes up to 400 timestamps,
    /// and appending them piece by piece (each append checks capacity and
    /// uniqueness) showed up in the page profile. Years outside 0...9999
    /// cannot be written in four digits and are clamped.
    public func writeRFC3339(to text: UnsafeMutablePointer<UInt8>) {
        let (days, msOfDay) = millisecondsSinceEpoch.floorDivided(by: 86_400_000)
        Self.writeDate(daysSinceEpoch: days, to: text)
        Self.writeTime(millisecondOfDay: msOfDay, to: text)
    }

    /// `YYYY-MM-DD`, the first 10 bytes of the RFC 3339 form.
    private static func writeDate(daysSinceEpoch days: Int64, to text: UnsafeMutablePointer<UInt8>) {
        let (civilYear, month, day) = Self.civilDate(daysSinceEpoch: days)
        let year = min(max(civilYear, 0), 9999)
        put(year / 100, at: 0, in: text)
        put(year % 100, at: 2, in: text)
        text[4] = UInt8(ascii: "-")
        put(month, at: 5, in: text)
        text[7] = UInt8(ascii: "-")
        put(day, at: 8, in: text)
    }

    /// Two decimal digits of `value` (0...99) at `index`.
    @inline(__always)
    private static func put(_ value: Int64, at index: Int, in text: UnsafeMutablePointer<UInt8>) {
        text[index] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value / 10)
        text[index + 1] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value % 10)
    }

    /// `THH:MM:SS.mmmZ`, bytes 10 to 23 of the RFC 3339 form.
    fileprivate static func writeTime(millisecondOfDay msOfDay: Int64, to text: UnsafeMutablePointer<UInt8>) {
        let hour = msOfDay / 3_600_000
        let minute = msOfDay / 60_000 % 60
        let second = msOfDay / 1000 % 60
        let millisecond = msOfDay % 1000
        func put(_ value: Int64, at index: Int) { Self.put(value, at: index, in: text) }
        text[10] = UInt8(ascii: "T")
        put(hour, at: 11)
        text[13] = UInt8(ascii: ":")
        put(minute, at: 14)
        text[16] = UInt8(ascii: ":")
        put(second, at: 17)
        text[19] = UInt8(ascii: ".")
        text[20] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: millisecond / 100)
        put(millisecond % 100, at: 21)
        text[23] = UInt8(ascii: "Z")
    }

    /// Parses `YYYY-MM-DDTHH:MM:SS[.f...]Z` (UTC only, `T` and `Z` upper
    /// case, as the store writes it); nil for anything else. Digits past
    /// milliseconds are dropped (floored).
    public init?(rfc3339 text: String) {
        var text = text
        guard let milliseconds = text.withUTF8({ RFC3339Parser.milliseconds($0, accepting: .storedForm) }) else { return nil }
        millisecondsSinceEpoch = milliseconds
    }

    // MARK: - Calendar arithmetic (Howard Hinnant's days_from_civil / civil_from_days)

    static func civilDate(daysSinceEpoch: Int64) -> (year: Int64, month: Int64, day: Int64) {
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

    static func daysSinceEpoch(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}

/// Writes many timestamps in RFC 3339 form, remembering the date of the
/// last one: the messages of a page nearly always share their day, and the
/// calendar arithmetic and the date's digits were half of the cost of a
/// timestamp (3% of a deep page's instructions, callgrind,
/// docs/performance.md). The bytes are exactly `writeRFC3339`'s.
///
/// ```swift
/// var dates = RFC3339Dates()
/// for time in times { dates.write(time, to: position) }
/// ```
public struct RFC3339Dates {
    private var day: Int64 = .min
    /// The date's 10 bytes as the first 8 and the last 2.
    private var head: UInt64 = 0
    private var tail: UInt16 = 0

    public init() {}

    /// Writes exactly `Timestamp.rfc3339Length` bytes at `text`.
    public mutating func write(_ timestamp: Timestamp, to text: UnsafeMutablePointer<UInt8>) {
        let (days, msOfDay) = timestamp.millisecondsSinceEpoch.floorDivided(by: 86_400_000)
        let raw = UnsafeMutableRawPointer(text)
        if days == day {
            raw.storeBytes(of: head, as: UInt64.self)
            raw.storeBytes(of: tail, toByteOffset: 8, as: UInt16.self)
            Timestamp.writeTime(millisecondOfDay: msOfDay, to: text)
        } else {
            timestamp.writeRFC3339(to: text)
            head = raw.loadUnaligned(as: UInt64.self)
            tail = raw.loadUnaligned(fromByteOffset: 8, as: UInt16.self)
            day = days
        }
    }
}

extension Int64 {
    /// Quotient and non-negative remainder, so times before 1970 format right.
    fileprivate func floorDivided(by divisor: Int64) -> (quotient: Int64, remainder: Int64) {
        let q = self / divisor, r = self % divisor
        return r < 0 ? (q - 1, r + divisor) : (q, r)
    }
}
