import Dispatch
import Foundation
import HTTPCore
import HistoryStore
import HistorySQLite
import Synchronization
import Testing
@testable import HistoryAPI

/// The access log copies what clients send, so it must never let them write
/// to the operator's terminal or log pipeline: only printable ASCII leaves
/// it, everything else as `\xHH`, a backslash included.
@Suite("Access log escaping")
struct AccessLogEscapingTests {
    /// Characters that break a line, a field or a terminal, with the escape each must become.
    static let hostile: [(text: String, escaped: String)] = [
        ("\u{2028}", #"\xE2\x80\xA8"#),  // LINE SEPARATOR: a new line to some viewers
        ("\u{0085}", #"\xC2\x85"#),  // NEXT LINE
        ("\u{202E}", #"\xE2\x80\xAE"#),  // RIGHT-TO-LEFT OVERRIDE: reorders what is shown
        ("\u{009B}", #"\xC2\x9B"#),  // CSI: starts a terminal control sequence
        ("\u{001B}[2J", #"\x1B[2J"#),  // ESC: the 7-bit form of the same
        ("\r\n", #"\x0D\x0A"#),
        ("\u{0000}", #"\x00"#),
        (" ", #"\x20"#),
        ("\u{007F}", #"\x7F"#),
        ("\\", #"\x5C"#),  // the escape character itself
        ("\\x41", #"\x5Cx41"#),  // so that this cannot read back as "A"
        ("é", #"\xC3\xA9"#),
        ("\u{FFFD}", #"\xEF\xBF\xBD"#),  // what an invalid UTF-8 byte of a request becomes
    ]

    @Test(arguments: hostile.indices)
    func eachHostileCharacterIsEscaped(_ index: Int) {
        let (text, escaped) = Self.hostile[index]
        var line: [UInt8] = []
        AccessLog.appendSanitized("/a" + text + "b", to: &line)
        #expect(String(decoding: line, as: UTF8.self) == "/a" + escaped + "b")
    }

    /// Every printable ASCII character but the backslash is kept as it is.
    @Test func printableASCIIIsKept() {
        let printable = String(decoding: (0x21...0x7E).filter { $0 != 0x5C }.map { UInt8($0) }, as: UTF8.self)
        var line: [UInt8] = []
        AccessLog.appendSanitized(printable, to: &line)
        #expect(String(decoding: line, as: UTF8.self) == printable)
    }

    /// Reading `\xHH` back gives the exact bytes: the escaping loses nothing
    /// and cannot be confused with text a client sent.
    @Test func escapingReadsBackToTheOriginalBytes() {
        let original = "/x?q=" + Self.hostile.map(\.text).joined() + "end"
        var line: [UInt8] = []
        AccessLog.appendSanitized(original, to: &line)
        #expect(line.allSatisfy { (0x21...0x7E).contains($0) })
        #expect(Self.unescape(line) == Array(original.utf8))
    }

    /// Over a real socket: requests whose target and method carry those
    /// characters are refused, and their log lines hold printable ASCII only.
    @Test func refusedRequestsAreLoggedInPrintableASCII() throws {
        try withLoggingServer { port, logged in
            let target = "/v1/conversations/a\u{2028}b\u{0085}c\u{202E}d\u{009B}e\\f"
            let refusedTarget = try HTTPClientConnection(host: "127.0.0.1", port: port)
            defer { refusedTarget.close() }
            try refusedTarget.sendRaw(Array("GET \(target) HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
            #expect(try refusedTarget.receive().status == 400)

            let refusedMethod = try HTTPClientConnection(host: "127.0.0.1", port: port)
            defer { refusedMethod.close() }
            try refusedMethod.sendRaw(Array("G\u{2028}\u{009B}T /healthz HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
            #expect(try refusedMethod.receive().status == 400)

            let plain = try HTTPClientConnection(host: "127.0.0.1", port: port)
            defer { plain.close() }
            #expect(try plain.request(HTTPRequest(method: .get, target: "/healthz")).status == 200)

            let escapedTarget = #"/v1/conversations/a\xE2\x80\xA8b\xC2\x85c\xE2\x80\xAEd\xC2\x9Be\x5Cf"#
            let output = logged { text in
                text.contains("GET \(escapedTarget) 400 ") && text.contains("Z - - 400 ") && text.contains("GET /healthz 200 ")
            }
            #expect(output.contains("GET \(escapedTarget) 400 "), "\(output)")
            #expect(output.contains("Z - - 400 "), "\(output)")
            // Nothing but printable ASCII and the line ends: no byte of what
            // the clients sent reached the output raw.
            let bytes = Array(output.utf8)
            #expect(bytes.allSatisfy { (0x20...0x7E).contains($0) || $0 == 0x0A }, "\(output)")
            let lines = output.split(separator: "\n")
            #expect(lines.count == 3, "\(output)")
            for line in lines {
                #expect(line.split(separator: " ", omittingEmptySubsequences: false).count == 7, "\(line)")
            }
        }
    }

    // MARK: - Helpers

    private static func unescape(_ line: [UInt8]) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = 0
        while index < line.count {
            if line[index] == UInt8(ascii: "\\"), index + 3 < line.count, line[index + 1] == UInt8(ascii: "x"),
               let value = UInt8(String(decoding: line[(index + 2)...(index + 3)], as: UTF8.self), radix: 16) {
                bytes.append(value)
                index += 4
            } else {
                bytes.append(line[index])
                index += 1
            }
        }
        return bytes
    }

    /// Runs `body` with the port of a server whose access log writes to a
    /// pipe, and a function that waits (at most 10 s) until what was logged
    /// satisfies a condition and returns it.
    private func withLoggingServer(_ body: (Int, (_ until: (String) -> Bool) -> String) throws -> Void) throws {
        let folder = FileManager.default.temporaryDirectory.appending(path: "access-log-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        var descriptors: [Int32] = [0, 0]
        try #require(pipe(&descriptors) == 0)
        let (readEnd, writeEnd) = (descriptors[0], descriptors[1])
        defer {
            close(readEnd)
            close(writeEnd)
        }
        try #require(fcntl(readEnd, F_SETFL, fcntl(readEnd, F_GETFL) | O_NONBLOCK) == 0)

        let store = try SQLiteHistoryStore(configuration: SQLiteStoreConfiguration(
            path: folder.appending(path: "history.sqlite").path, durability: .normal))
        defer { store.close() }
        let accessLog = AccessLog(fileDescriptor: writeEnd)
        let api = APIResponder(store: store, metrics: Metrics(), logger: Logger(level: .error), accessLog: accessLog)
        let server = HTTPServer(configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0),
                                responder: api, observer: api)
        try server.start()
        defer {
            let done = DispatchSemaphore(value: 0)
            server.shutdown(gracePeriod: .seconds(2)) { done.signal() }
            done.wait()
        }

        var output: [UInt8] = []
        func logged(until condition: (String) -> Bool) -> String {
            let deadline = Date().addingTimeInterval(10)
            repeat {
                accessLog.flushAndWait()
                var chunk = [UInt8](repeating: 0, count: 65_536)
                while true {
                    let count = read(readEnd, &chunk, chunk.count)
                    guard count > 0 else { break }
                    output.append(contentsOf: chunk[0..<count])
                }
                if condition(String(decoding: output, as: UTF8.self)) { break }
                Thread.sleep(forTimeInterval: 0.01)
            } while Date() < deadline
            return String(decoding: output, as: UTF8.self)
        }
        try body(server.port, logged)
    }
}
