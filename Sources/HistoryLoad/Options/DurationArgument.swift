import ArgumentParser

/// `--duration 30s`: a length of time as `500ms`, `10s`, `2m` or a bare number of seconds.
struct DurationArgument: ExpressibleByArgument, Hashable, Sendable, CustomStringConvertible {
    var duration: Duration

    init(_ duration: Duration) { self.duration = duration }

    init?(argument: String) {
        let text = argument.lowercased()
        let units: [(suffix: String, nanoseconds: Double)] = [
            ("ms", 1e6), ("us", 1e3), ("s", 1e9), ("m", 60e9), ("h", 3600e9),
        ]
        var value: Double?
        for unit in units where text.hasSuffix(unit.suffix) {
            if let number = Double(text.dropLast(unit.suffix.count)) {
                value = number * unit.nanoseconds
            }
            break
        }
        if value == nil, let seconds = Double(text) { value = seconds * 1e9 }
        guard let nanoseconds = value, nanoseconds.isFinite, nanoseconds > 0 else { return nil }
        duration = .nanoseconds(Int64(nanoseconds))
    }

    var description: String {
        let seconds = duration.secondsDouble
        return seconds == seconds.rounded() ? "\(Int(seconds))s" : "\(seconds)s"
    }
}
