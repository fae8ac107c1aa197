extension Timestamp {
    /// Parses any RFC 3339 date-time a client may send (`around_time`):
    /// `YYYY-MM-DDTHH:MM:SS[.f...]` then `Z` or a `±HH:MM` offset, `T` and
    /// `Z` in either case; digits past milliseconds are dropped (floored),
    /// however many there are. nil for anything else, including a leap
    /// second (`:60`), which no stored time can equal.
    public init?(anyRFC3339 text: String) {
        var text = text
        guard let milliseconds = text.withUTF8({ RFC3339Parser.milliseconds($0, accepting: .anyOffset) }) else { return nil }
        self.init(millisecondsSinceEpoch: milliseconds)
    }
}
