import Glibc
import Synchronization

/// The `Date` header line (IMF-fixdate, RFC 9110 §5.6.7), formatted once per
/// second and shared by every connection: formatting a date per response
/// would cost more than the rest of the head.
enum HTTPDate {
    private struct Cache {
        var second = -1
        var line: [UInt8] = []
    }

    private static let cache = Mutex(Cache())

    /// Appends `Date: Sun, 06 Nov 1994 08:49:37 GMT\r\n` for the current second.
    static func appendHeaderLine(to output: inout [UInt8]) {
        let now = time(nil)
        cache.withLock { cache in
            if cache.second != now {
                cache.second = now
                cache.line = headerLine(for: now)
            }
            output.append(contentsOf: cache.line)
        }
    }

    static func headerLine(for seconds: Int) -> [UInt8] {
        var clock = time_t(seconds)
        var parts = tm()
        gmtime_r(&clock, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        var line = Array("Date: ".utf8)
        line += days[Int(parts.tm_wday)].utf8
        line += ", ".utf8
        appendTwoDigits(Int(parts.tm_mday), to: &line)
        line.append(HTTPSyntax.space)
        line += months[Int(parts.tm_mon)].utf8
        line.append(HTTPSyntax.space)
        line += String(1900 + Int(parts.tm_year)).utf8
        line.append(HTTPSyntax.space)
        appendTwoDigits(Int(parts.tm_hour), to: &line)
        line.append(HTTPSyntax.colon)
        appendTwoDigits(Int(parts.tm_min), to: &line)
        line.append(HTTPSyntax.colon)
        appendTwoDigits(Int(parts.tm_sec), to: &line)
        line += " GMT\r\n".utf8
        return line
    }

    private static func appendTwoDigits(_ value: Int, to line: inout [UInt8]) {
        line.append(UInt8(ascii: "0") + UInt8(value / 10))
        line.append(UInt8(ascii: "0") + UInt8(value % 10))
    }
}
