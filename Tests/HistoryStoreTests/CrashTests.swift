import Dispatch
import Foundation
import HistoryTestSupport
import Testing
@testable import HistoryStore
@testable import HistorySQLite
#if canImport(Glibc)
import Glibc
#endif

/// Guarantee 3: an answered append survives `kill -9` at any moment.
@Suite("Crash safety")
struct CrashTests {
    /// `history-store-bench` sits in the build products folder, beside the
    /// test bundle that `CommandLine.arguments[0]` names: this test target
    /// depends on `HistoryStoreBench`, so building the tests builds it.
    static let benchBinary = URL(fileURLWithPath: CommandLine.arguments[0])
        .deletingLastPathComponent().appendingPathComponent("history-store-bench")

    /// A missing binary fails the test: this is the proof of a guarantee,
    /// and a proof that is skipped proves nothing.
    @Test(.timeLimit(.minutes(3)))
    func killNineLosesNoAnsweredAppend() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.benchBinary.path),
                     "history-store-bench is not built at \(Self.benchBinary.path)")
        try withTemporaryDirectory { directory in
            let path = directory.databasePath
            let child = Process()
            child.executableURL = Self.benchBinary
            child.arguments = ["crash-child", "--database", path, "--threads", "4"]
            let output = Pipe()
            child.standardOutput = output
            try child.runSerialized()
            let pid = child.processIdentifier
            // A child that hangs silently is killed anyway, which ends the read.
            DispatchQueue.global().asyncAfter(deadline: .now() + 90) { kill(pid, SIGKILL) }

            let reader = output.fileHandleForReading
            var bytes = Data()
            while bytes.reduce(0, { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }) < 200 {
                let chunk = reader.availableData
                if chunk.isEmpty { break }
                bytes.append(chunk)
            }
            kill(pid, SIGKILL)
            // Lines written before the kill are acknowledged appends too.
            while true {
                let chunk = reader.availableData
                if chunk.isEmpty { break }
                bytes.append(chunk)
            }
            child.waitUntilExit()
            #expect(child.terminationReason == .uncaughtSignal)

            // Only complete lines: a cut last line is not a whole ack.
            let text = String(decoding: bytes, as: UTF8.self)
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
            let acked = lines.compactMap { Int64($0) }
            #expect(acked.count == lines.count, "unexpected output from the child: \(text.prefix(500))")
            #expect(acked.count >= 200)

            let store = try SQLiteHistoryStore(configuration: SQLiteStoreConfiguration(path: path))
            defer { store.close() }
            #expect(try store.checkIntegrity() == ["ok"])
            var missing: [Int64] = []
            for id in acked where (try? store.message(id, in: cid("crash"))) == nil {
                missing.append(id)
            }
            #expect(missing.isEmpty, "acknowledged but lost: \(missing.prefix(20))")
            let conversation = try store.conversation(cid("crash"))
            #expect(conversation.messageCount >= Int64(acked.count))
            #expect(conversation.newestID! >= acked.max()!)
        }
    }
}
