#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Progress on stderr, so stdout carries only the report: on a terminal one
/// line rewritten in place, elsewhere (CI logs, pipes) plain lines.
struct ProgressPrinter {
    let enabled: Bool
    let isTerminal = isatty(STDERR_FILENO) == 1

    init(enabled: Bool) { self.enabled = enabled }

    func line(elapsed: Double, interval: (requests: UInt64, p99Micros: UInt64, errors: Int), violations: Int) {
        guard enabled else { return }
        let text = "[\(Format.fixed(elapsed, 0))s] \(interval.requests) req/s  p99 \(Format.milliseconds(interval.p99Micros))  "
            + "errors \(interval.errors)  violations \(violations)"
        write(text)
    }

    /// Writes a line: in place on a terminal, else as a line of its own.
    func write(_ text: String) {
        guard enabled else { return }
        if isTerminal {
            Self.stderr("\r\u{1B}[2K" + text)
        } else {
            Self.stderr(text + "\n")
        }
    }

    func finish() {
        if enabled && isTerminal { Self.stderr("\n") }
    }

    static func stderr(_ text: String) {
        var bytes = Array(text.utf8)
        bytes.withUnsafeMutableBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = systemWrite(STDERR_FILENO, buffer.baseAddress! + offset, buffer.count - offset)
                if written <= 0 { break }
                offset += written
            }
        }
    }
}

/// Number formatting without Foundation's formatters.
enum Format {
    static func fixed(_ value: Double, _ digits: Int) -> String {
        guard value.isFinite else { return "-" }
        var factor = 1.0
        for _ in 0..<digits { factor *= 10 }
        let scaled = (abs(value) * factor).rounded()
        let whole = Int(scaled / factor)
        let sign = value < 0 && scaled > 0 ? "-" : ""
        guard digits > 0 else { return sign + String(whole) }
        let fraction = String(Int(scaled) - whole * Int(factor))
        return sign + String(whole) + "." + String(repeating: "0", count: digits - fraction.count) + fraction
    }

    /// Microseconds as milliseconds with a sensible precision.
    static func milliseconds(_ micros: UInt64) -> String {
        let ms = Double(micros) / 1000
        return (ms < 10 ? fixed(ms, 2) : ms < 100 ? fixed(ms, 1) : fixed(ms, 0)) + " ms"
    }

    static func bytes(_ count: UInt64) -> String {
        let value = Double(count)
        if value >= 1e9 { return fixed(value / 1e9, 2) + " GB" }
        if value >= 1e6 { return fixed(value / 1e6, 1) + " MB" }
        if value >= 1e3 { return fixed(value / 1e3, 1) + " KB" }
        return "\(count) B"
    }

    static func grouped(_ value: Int) -> String {
        let text = String(abs(value))
        var out = ""
        for (i, character) in text.enumerated() {
            if i > 0 && (text.count - i) % 3 == 0 { out.append(",") }
            out.append(character)
        }
        return (value < 0 ? "-" : "") + out
    }
}

#if canImport(Glibc)
private let systemWrite = Glibc.write
#elseif canImport(Darwin)
private let systemWrite = Darwin.write
#endif
