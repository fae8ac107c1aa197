import Foundation
import HistoryStore

/// How much the server says about itself on stderr.
public enum LogLevel: Int, Comparable, Sendable, CaseIterable {
    case debug
    case info
    case warning
    case error

    public init?(name: String) {
        switch name.lowercased() {
        case "debug", "trace": self = .debug
        case "info", "notice": self = .info
        case "warning", "warn": self = .warning
        case "error", "critical": self = .error
        default: return nil
        }
    }

    public var name: String {
        switch self {
        case .debug: "debug"
        case .info: "info"
        case .warning: "warning"
        case .error: "error"
        }
    }

    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Level-aware messages about the server itself (not requests: those go to
/// the access log), one line each on stderr: `2026-11-21T10:00:00.123Z warning message`.
///
/// The message is an autoclosure so a disabled level costs one comparison.
public struct Logger: Sendable {
    public let level: LogLevel
    private let sink: @Sendable (String) -> Void

    /// - Parameter sink: where lines go; stderr when nil (tests pass a collector).
    public init(level: LogLevel, sink: (@Sendable (String) -> Void)? = nil) {
        self.level = level
        self.sink = sink ?? { line in
            var bytes = Array(line.utf8)
            bytes.append(UInt8(ascii: "\n"))
            // One write(2) per line: lines from many threads never interleave mid-line.
            bytes.withUnsafeBytes { buffer in
                _ = write(STDERR_FILENO, buffer.baseAddress, buffer.count)
            }
        }
    }

    public func debug(_ message: @autoclosure () -> String) { log(.debug, message) }
    public func info(_ message: @autoclosure () -> String) { log(.info, message) }
    public func warning(_ message: @autoclosure () -> String) { log(.warning, message) }
    public func error(_ message: @autoclosure () -> String) { log(.error, message) }

    private func log(_ messageLevel: LogLevel, _ message: () -> String) {
        guard messageLevel >= level else { return }
        sink("\(Timestamp.now().rfc3339) \(messageLevel.name) \(message())")
    }
}
