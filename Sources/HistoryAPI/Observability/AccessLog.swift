import Dispatch
import Foundation
import HTTPCore
import HistoryStore
import Synchronization

/// One line per answered request, on stdout:
/// `2026-11-21T10:00:00.123Z GET /v1/conversations/a/messages?limit=50 200 18342 412us 127.0.0.1`
/// (time, method, target, status, body bytes, microseconds, client
/// address; `-` for a method or target never read, as for a request line
/// that did not parse). The client is the peer, or behind a trusted proxy
/// the address it forwarded for (`--trusted-proxy`).
///
/// The value of an `access_token` or `token` query parameter is written
/// `***`: a client that sent its token that way by mistake must not leave
/// a credential in every log it passes through.
/// Method and target are written in printable ASCII, anything else as
/// `\xHH` (see `appendSanitized`).
///
/// Cheap because it is on every request: a line is formatted into bytes and
/// appended to a buffer under a lock; a serial queue writes the buffer when
/// it passes 32 KiB or 200 ms after its first line, never the request's thread. If stdout
/// stops draining (a pipe nobody reads), lines beyond 4 MiB of backlog are
/// dropped and counted rather than held in memory or blocking answers.
public final class AccessLog: Sendable {
    private static let flushThreshold = 32 * 1024
    private static let maximumBacklog = 4 * 1024 * 1024

    private struct State: Sendable {
        var buffer: [UInt8] = []
        /// Bytes handed to the write queue and not yet written.
        var backlog = 0
        var dropped = 0
        /// A timed flush is scheduled for the lines buffered now.
        var flushScheduled = false
    }

    private let state = Mutex(State())
    private let fileDescriptor: Int32
    private let writeQueue = DispatchQueue(label: "history.access-log")

    /// - Parameter fileDescriptor: where lines go; stdout by default.
    public init(fileDescriptor: Int32 = STDOUT_FILENO) {
        self.fileDescriptor = fileDescriptor
    }

    /// Lines dropped because the output did not drain.
    public var droppedLines: Int { state.withLock { $0.dropped } }

    public func record(_ exchange: HTTPExchange) {
        var line: [UInt8] = []
        line.reserveCapacity(64 + exchange.target.utf8.count)
        Timestamp.now().appendRFC3339(to: &line)
        line.append(UInt8(ascii: " "))
        Self.appendSanitized(exchange.method, to: &line)
        line.append(UInt8(ascii: " "))
        Self.appendSanitized(Self.maskingCredentials(exchange.target), to: &line)
        line.append(UInt8(ascii: " "))
        JSONWriter.appendInteger(Int64(exchange.status), to: &line)
        line.append(UInt8(ascii: " "))
        JSONWriter.appendInteger(Int64(exchange.bytes), to: &line)
        line.append(UInt8(ascii: " "))
        JSONWriter.appendInteger(Int64(exchange.microseconds), to: &line)
        line.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "s"), UInt8(ascii: " ")])
        Self.appendSanitized(exchange.client, to: &line)
        line.append(0x0A)

        let (full, scheduleFlush): ([UInt8]?, Bool) = state.withLock { state in
            guard state.backlog + state.buffer.count + line.count <= Self.maximumBacklog else {
                state.dropped += 1
                return (nil, false)
            }
            state.buffer.append(contentsOf: line)
            guard state.buffer.count >= Self.flushThreshold else {
                defer { state.flushScheduled = true }
                return (nil, !state.flushScheduled)
            }
            state.backlog += state.buffer.count
            defer { state.buffer = [] }
            return (state.buffer, false)
        }
        if let full {
            writeQueue.async { self.write(full) }
        }
        if scheduleFlush {
            writeQueue.asyncAfter(deadline: .now() + .milliseconds(200)) { self.flush() }
        }
    }

    /// Writes what is buffered now and waits until it is written (shutdown).
    public func flushAndWait() {
        writeQueue.sync { flush() }
    }

    /// Runs on `writeQueue`.
    private func flush() {
        let pending: [UInt8] = state.withLock { state in
            state.flushScheduled = false
            state.backlog += state.buffer.count
            defer { state.buffer = [] }
            return state.buffer
        }
        if !pending.isEmpty { write(pending) }
    }

    /// Runs on `writeQueue`; retries short writes and EINTR, gives up on other errors.
    private func write(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { buffer in try? writeAll(buffer, to: fileDescriptor) }
        state.withLock { $0.backlog -= bytes.count }
    }

    /// Writes `text` as printable ASCII only: every other byte (controls,
    /// space, DEL and every byte of a non-ASCII character) becomes `\xHH`,
    /// and so does the backslash itself, so the escaping reads back
    /// unambiguously. A refused request's target is whatever a client sent:
    /// raw, it could end the line early (CR, LF, U+2028, U+0085), split a
    /// field (space), reorder what a terminal shows (U+202E) or send it a
    /// control sequence (ESC, U+009B). An empty field (a request refused
    /// before its method and target were read) is written `-`, as web
    /// servers do.
    static func appendSanitized(_ text: String, to line: inout [UInt8]) {
        guard !text.isEmpty else {
            line.append(UInt8(ascii: "-"))
            return
        }
        for byte in text.utf8 {
            if byte > 0x20, byte < 0x7F, byte != UInt8(ascii: "\\") {
                line.append(byte)
            } else {
                line.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "x"),
                                         hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0x0F)]])
            }
        }
    }

    /// Query parameter names whose values are credentials (OAuth's
    /// `access_token`, RFC 6750 §2.3, and the common `token`).
    static let credentialParameters: Set<String> = ["access_token", "token"]

    /// `target` with the value of every credential parameter replaced by
    /// `***`; names are compared percent-decoded and in any case, so
    /// `?ACCESS%5FTOKEN=` is masked too. The target itself when there is none.
    static func maskingCredentials(_ target: String) -> String {
        guard let question = target.utf8.firstIndex(of: UInt8(ascii: "?")) else { return target }
        let query = target[target.utf8.index(after: question)...]
        guard mayNameCredential(query) else { return target }
        var masked = false
        let pairs = query.split(separator: "&", omittingEmptySubsequences: false).map { pair -> String in
            let name = pair.utf8.firstIndex(of: UInt8(ascii: "=")).map { pair[..<$0] } ?? pair
            let decoded = QueryParameters.percentDecoded(name, plusIsSpace: true) ?? String(name)
            guard credentialParameters.contains(decoded.lowercased()) else { return String(pair) }
            masked = true
            return name + "=***"
        }
        guard masked else { return target }
        return String(target[...question]) + pairs.joined(separator: "&")
    }

    /// False when `query` surely names no credential: no `token` in any
    /// case and no `%` that could spell one. Keeps the usual page query
    /// (`?limit=50&before=...`) from being split on every line.
    private static func mayNameCredential(_ query: Substring) -> Bool {
        let word = Array("token".utf8)
        var matched = 0
        for byte in query.utf8 {
            if byte == UInt8(ascii: "%") { return true }
            let lowered = byte | 0x20
            if lowered == word[matched] {
                matched += 1
                if matched == word.count { return true }
            } else {
                matched = lowered == word[0] ? 1 : 0
            }
        }
        return false
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)
}
