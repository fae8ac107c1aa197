extension Timestamp {
    /// Parses any RFC 3339 date-time a client may send (`around_time`):
    /// `YYYY-MM-DDTHH:MM:SS[.f...]` then `Z` or a `±HH:MM` offset, `T` and
    /// `Z` in either case; digits past milliseconds are dropped (floored).
    /// nil for anything else, including a leap second (`:60`), which no
    /// stored time can equal.
    public init?(anyRFC3339 text: String) {
        var utf8 = Array(text.utf8)
        guard utf8.count >= 20 else { return nil }
        if utf8[10] == UInt8(ascii: "t") { utf8[10] = UInt8(ascii: "T") }
        var offsetMinutes: Int64 = 0
        let last = utf8[utf8.count - 1]
        if last == UInt8(ascii: "Z") || last == UInt8(ascii: "z") {
            utf8[utf8.count - 1] = UInt8(ascii: "Z")
        } else {
            // `±HH:MM` in place of `Z`.
            let start = utf8.count - 6
            guard start >= 19, utf8[start + 3] == UInt8(ascii: ":") else { return nil }
            let sign = utf8[start]
            guard sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") else { return nil }
            var digits: [Int64] = []
            for index in [start + 1, start + 2, start + 4, start + 5] {
                let byte = utf8[index]
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                digits.append(Int64(byte - UInt8(ascii: "0")))
            }
            let hours = digits[0] * 10 + digits[1], minutes = digits[2] * 10 + digits[3]
            guard hours < 24, minutes < 60 else { return nil }
            offsetMinutes = (hours * 60 + minutes) * (sign == UInt8(ascii: "-") ? -1 : 1)
            utf8.removeLast(6)
            utf8.append(UInt8(ascii: "Z"))
        }
        guard let local = Timestamp(rfc3339: String(decoding: utf8, as: UTF8.self)) else { return nil }
        // The local time minus its offset is UTC.
        self.init(millisecondsSinceEpoch: local.millisecondsSinceEpoch - offsetMinutes * 60_000)
    }
}
