/// RFC 3339's `date-time` read from its bytes in one pass, with no
/// allocation. Every number is bounded before it is read: the fraction
/// may have any count of digits (RFC 3339's `1*DIGIT`) and only its first
/// three are kept, so no text can overflow an integer (a 26-digit
/// fraction once trapped the server).
enum RFC3339Parser {
    enum Form {
        /// As the store writes times: `T`, `Z`, UTC.
        case storedForm
        /// Anything RFC 3339 allows: `T` or `t`, `Z`, `z` or `±HH:MM`.
        case anyOffset
    }

    /// Milliseconds since the epoch, UTC, of `bytes`; nil when they are
    /// not a date-time of `form`.
    static func milliseconds(_ bytes: UnsafeBufferPointer<UInt8>, accepting form: Form) -> Int64? {
        let lenient = form == .anyOffset
        guard bytes.count >= 20,
              bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
              bytes[10] == UInt8(ascii: "T") || (lenient && bytes[10] == UInt8(ascii: "t")),
              bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
              let year = digits(bytes, 0, 4), let month = digits(bytes, 5, 2), let day = digits(bytes, 8, 2),
              let hour = digits(bytes, 11, 2), let minute = digits(bytes, 14, 2), let second = digits(bytes, 17, 2),
              (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 60
        else { return nil }
        var index = 19
        var millisecond: Int64 = 0
        if bytes[index] == UInt8(ascii: ".") {
            index += 1
            let first = index
            while index < bytes.count, let digit = digit(bytes[index]) {
                if index - first < 3 { millisecond = millisecond * 10 + digit }
                index += 1
            }
            let count = index - first
            guard count >= 1 else { return nil }
            for _ in min(count, 3)..<3 { millisecond *= 10 }
        }
        guard index < bytes.count else { return nil }
        var offsetMinutes: Int64 = 0
        switch bytes[index] {
        case UInt8(ascii: "Z"):
            index += 1
        case UInt8(ascii: "z") where lenient:
            index += 1
        case UInt8(ascii: "+") where lenient, UInt8(ascii: "-") where lenient:
            guard bytes.count - index == 6, bytes[index + 3] == UInt8(ascii: ":"),
                  let hours = digits(bytes, index + 1, 2), let minutes = digits(bytes, index + 4, 2),
                  hours < 24, minutes < 60 else { return nil }
            offsetMinutes = (hours * 60 + minutes) * (bytes[index] == UInt8(ascii: "-") ? -1 : 1)
            index += 6
        default:
            return nil
        }
        guard index == bytes.count else { return nil }
        let days = Timestamp.daysSinceEpoch(year: year, month: month, day: day)
        let local = ((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + millisecond
        // The local time minus its offset is UTC.
        return local - offsetMinutes * 60_000
    }

    /// The value of `count` (at most 4) decimal digits at `start`; nil if any is not one.
    private static func digits(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int, _ count: Int) -> Int64? {
        var value: Int64 = 0
        for index in start..<(start + count) {
            guard let digit = digit(bytes[index]) else { return nil }
            value = value * 10 + digit
        }
        return value
    }

    private static func digit(_ byte: UInt8) -> Int64? {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") ? Int64(byte &- UInt8(ascii: "0")) : nil
    }
}
