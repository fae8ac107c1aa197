import Glibc
import Synchronization

/// The `Date` header line (IMF-fixdate, RFC 9110 §5.6.7), formatted once per
/// second and shared by every connection: formatting a date per response
/// would cost more than the rest of the head.
///
/// Shared without a lock: every worker thread reads the line for every
/// response, and a mutex there was contended (2.5% of the server's CPU
/// samples in `_lockSlow` with PostgreSQL's 8 reading threads,
/// docs/performance.md, "The Date line without a lock"). The line is
/// published as words under a sequence lock: `stamp` is twice the second
/// the words hold, odd while a thread rewrites them; a reader that sees
/// the stamp move while it copies formats the line itself.
enum HTTPDate {
    /// `Date: Sun, 06 Nov 1994 08:49:37 GMT\r\n`, always this long.
    static let lineLength = 37
    private static let stamp = Atomic<Int>(0)
    private static let word0 = Atomic<UInt64>(0)
    private static let word1 = Atomic<UInt64>(0)
    private static let word2 = Atomic<UInt64>(0)
    private static let word3 = Atomic<UInt64>(0)
    private static let word4 = Atomic<UInt64>(0)

    /// Appends `Date: Sun, 06 Nov 1994 08:49:37 GMT\r\n` for the current second.
    static func appendHeaderLine(to output: inout [UInt8]) {
        let now = time(nil)
        let seen = stamp.load(ordering: .acquiring)
        if seen == 2 * now {
            var words = (word0.load(ordering: .relaxed), word1.load(ordering: .relaxed), word2.load(ordering: .relaxed),
                         word3.load(ordering: .relaxed), word4.load(ordering: .relaxed))
            atomicMemoryFence(ordering: .acquiring)
            if stamp.load(ordering: .relaxed) == seen {
                withUnsafeBytes(of: &words) { raw in
                    raw.withMemoryRebound(to: UInt8.self) { output.append(contentsOf: UnsafeBufferPointer(rebasing: $0[..<lineLength])) }
                }
                return
            }
        }
        let line = headerLine(for: now)
        output.append(contentsOf: line)
        publish(line, second: now, replacing: seen)
    }

    /// Stores `line` as the one of `second`, unless another thread is
    /// storing one or a later second is already there.
    private static func publish(_ line: [UInt8], second: Int, replacing seen: Int) {
        guard seen.isMultiple(of: 2), seen < 2 * second, line.count == lineLength,
              stamp.compareExchange(expected: seen, desired: 2 * second + 1, ordering: .relaxed).exchanged else { return }
        atomicMemoryFence(ordering: .releasing)
        var words: (UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &words) { $0.copyBytes(from: line) }
        word0.store(words.0, ordering: .relaxed)
        word1.store(words.1, ordering: .relaxed)
        word2.store(words.2, ordering: .relaxed)
        word3.store(words.3, ordering: .relaxed)
        word4.store(words.4, ordering: .relaxed)
        stamp.store(2 * second, ordering: .releasing)
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
