import Foundation
import Glibc
import HTTPCore
import HistoryTestSupport
import Testing

/// The output budget and `--write-timeout`, measured on the real binary:
/// what clients that do not read cost the server process (its resident
/// memory, read from `/proc`), and when they are cut off.
///
/// Every answer asked for is the newest page of a conversation of maximal
/// messages (16 KiB of U+0008, about 98 KB of JSON each), which
/// `--max-response-bytes` (1 MiB by default) stops at about 1 MiB.
@Suite("Output budget and write timeout (history-server as a process)", .serialized)
struct OutputBudgetProcessTests {
    static let maximalBody = String(repeating: #"\b"#, count: 16 * 1024)
    static let bigPage = "/v1/conversations/big/messages?limit=200"
    static let answerBytes = 1024 * 1024
    static let outputBudget = HTTPLimits().outputBudget

    /// A server started with `flags` and a conversation whose newest page is about 1 MiB.
    func withBigConversation(_ flags: [String], _ body: (ServerProcess) throws -> Void) throws {
        try withTemporaryDirectory { folder in
            let server = try ServerProcess(arguments: ["--port", "0", "--database", folder.databasePath,
                                                       "--access-log", "off"] + flags)
            defer { server.stop() }
            let client = try server.connect()
            defer { client.close() }
            try client.createConversation("big")
            for _ in 0..<12 { try client.appendMessage("big", body: Self.maximalBody) }
            let page = try client.get(Self.bigPage)
            #expect(page.status == 200)
            #expect(page.body.count > Self.answerBytes * 8 / 10 && page.body.count <= Self.answerBytes,
                    "a page of \(page.body.count) bytes")
            try body(server)
        }
    }

    static func pipelined(_ count: Int, _ target: String = bigPage) -> [UInt8] {
        Array(String(repeating: "GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", count: count).utf8)
    }

    /// Four clients each ask for 40 pages (40 MiB) and read nothing. The
    /// server takes a request only while less than the budget waits, so each
    /// holds at most the budget plus one answer (about 1.25 MiB; its buffer
    /// may have grown to twice that); the kernel's socket buffers take a few
    /// answers more, but not in the process. Resident memory is sampled until
    /// the server has done all it will (its CPU time stands still for a
    /// second). The bound allows each client the budget plus two answers,
    /// and 24 MiB for the allocator's and threads' slack; without the budget
    /// the server would hold up to 160 MiB.
    @Test func clientsThatNeverReadCostTheServerTheBudgetAndOneAnswerEach() throws {
        try withBigConversation(["--write-timeout", "600"]) { server in
            let pid = server.processIdentifier
            let warm = try server.connect(timeout: .seconds(60))
            defer { warm.close() }
            for _ in 0..<4 { #expect(try warm.get(Self.bigPage).status == 200) }
            let before = try residentBytes(of: pid)

            let clients = 4
            var greedy: [HTTPClientConnection] = []
            defer { for client in greedy { client.close() } }
            for _ in 0..<clients {
                let client = try server.connect()
                try client.sendRaw(Self.pipelined(40))
                greedy.append(client)
            }
            var peak = before
            var cpu = try cpuTicks(of: pid)
            var stillTicks = 0
            let started = ContinuousClock.now
            while stillTicks < 4 && ContinuousClock.now - started < .seconds(150) {
                Thread.sleep(forTimeInterval: 0.25)
                peak = max(peak, try residentBytes(of: pid))
                let now = try cpuTicks(of: pid)
                stillTicks = now == cpu ? stillTicks + 1 : 0
                cpu = now
            }
            #expect(stillTicks >= 4, "the server was still busy after \(ContinuousClock.now - started)")
            let growth = peak - before
            let bound = clients * (Self.outputBudget + 2 * Self.answerBytes) + 24 * 1024 * 1024
            #expect(growth < bound, "resident memory grew by \(growth / 1024) KiB (bound \(bound / 1024) KiB)")

            // Everyone else is still served, on another connection.
            let other = try server.connect(timeout: .seconds(60))
            defer { other.close() }
            #expect(try other.get(Self.bigPage).status == 200)
        }
    }

    /// A client that reads 1 KiB every 100 ms of the eight pages it asked
    /// for keeps the server's output pending; it is reset at the write
    /// timeout (4 s, the flag's way in) after its first answer was queued,
    /// while another client is served on every tick. (That reads which move
    /// the server's output do not extend the time is shown on the bare HTTP
    /// layer, where a 20 MB answer makes the kernel's buffers turn over.)
    /// 4 s rather than less: the ticks counted below must fit in it even
    /// when this test process is held up for a second or two meanwhile.
    @Test func aTrickleReaderIsResetAtTheWriteTimeoutWhileOthersAreServed() throws {
        try withBigConversation(["--write-timeout", "4"]) { server in
            let trickle = try TrickleClient(port: server.port)
            defer { trickle.close() }
            let other = try server.connect(timeout: .seconds(5))
            defer { other.close() }
            // Taken before sending: the server (another process) may queue
            // the first answer before this thread takes its next step.
            let started = ContinuousClock.now
            try trickle.send(Self.pipelined(8))
            var servedMeanwhile = 0
            var ended = false
            while !ended && ContinuousClock.now - started < .seconds(20) {
                Thread.sleep(forTimeInterval: 0.1)
                ended = try trickle.hasEnded()
                if !ended { trickle.read(upTo: 1024) }
                if try other.get("/v1/conversations/big/messages?limit=1").status == 200 { servedMeanwhile += 1 }
            }
            let elapsed = ContinuousClock.now - started
            #expect(ended, "still open after \(elapsed)")
            #expect(elapsed >= .milliseconds(3900), "closed after \(elapsed), before the write timeout")
            #expect(elapsed < .seconds(15), "closed only after \(elapsed)")
            #expect(trickle.bytesRead > 8 * 1024, "read \(trickle.bytesRead) bytes")
            #expect(servedMeanwhile >= 10)
        }
    }

    /// A client that reads its answers as they come is never cut off, even
    /// with the write timeout at 4 s and more queued at once than the
    /// budget; after a pause past the timeout, the connection still serves.
    /// (Each answer must be read whole within the timeout of its queueing:
    /// 4 s rather than less, so that this test process held up for a
    /// second or two while reading is not cut off.)
    @Test func aClientReadingItsLargeAnswersIsNotClosed() throws {
        try withBigConversation(["--write-timeout", "4"]) { server in
            let reader = try server.connect()
            defer { reader.close() }
            try reader.sendRaw(Self.pipelined(6))
            for index in 0..<6 {
                let response = try reader.receive()
                #expect(response.status == 200, "answer \(index)")
                #expect(response.body.count > Self.answerBytes * 8 / 10)
            }
            Thread.sleep(forTimeInterval: 4.5)
            #expect(try reader.get(Self.bigPage).status == 200)
        }
    }

    @Test(arguments: [["--write-timeout", "0"], ["--write-timeout", "1.5"], ["--write-timeout", "86401"]])
    func badWriteTimeoutsExitTwo(_ arguments: [String]) throws {
        let result = try ServerProcess.run(arguments)
        #expect(result.status == 2)
        #expect(result.stderr.contains("--write-timeout"), "\(result.stderr)")
        let fromVariable = try ServerProcess.run(["--port", "0"], environment: ["HISTORY_WRITE_TIMEOUT": arguments[1]])
        #expect(fromVariable.status == 2)
        #expect(fromVariable.stderr.contains("HISTORY_WRITE_TIMEOUT"), "\(fromVariable.stderr)")
    }
}

/// The process's resident set (`VmRSS` in `/proc/<pid>/status`), in bytes.
private func residentBytes(of pid: Int32) throws -> Int {
    let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
    guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
          let kilobytes = Int(line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first ?? "") else {
        throw CocoaError(.fileReadCorruptFile)
    }
    return kilobytes * 1024
}

/// The process's CPU time so far (user and system, in clock ticks), from `/proc/<pid>/stat`.
private func cpuTicks(of pid: Int32) throws -> Int {
    let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
    // After the command name in parentheses: state is field 0, utime 11, stime 12.
    guard let close = stat.lastIndex(of: ")") else { throw CocoaError(.fileReadCorruptFile) }
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else {
        throw CocoaError(.fileReadCorruptFile)
    }
    return user + system
}
