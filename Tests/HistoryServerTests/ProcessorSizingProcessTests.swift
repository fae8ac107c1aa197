import Foundation
import HistoryTestSupport
import Testing

/// The server sizes its threads by the processors it may use, not the
/// machine's: started on one CPU (`taskset -c 0`, as a container's cpuset
/// does), it says so at start and runs one thread per core fewer.
@Suite struct ProcessorSizingProcessTests {
    @Test func aServerPinnedToOneCPUSizesItsThreadsForOne() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let arguments = ["--port", "0", "--database", folder.databasePath, "--access-log", "off", "--read-connections", "3"]
        let pinned = try ServerProcess(arguments: arguments, launcher: ["/usr/bin/taskset", "-c", "0"])
        let line = try sizingLine(of: pinned)
        pinned.stop()
        #expect(line.contains("1 processor available ("), "\(line)")
        #expect(line.contains("1 in this process's affinity"), "\(line)")
        // One thread per available core never blocks, plus the 3 readers.
        #expect(line.hasSuffix(": 4 HTTP threads, 3 store readers"), "\(line)")
    }

    /// The start-up log line that names the processors, once written.
    private func sizingLine(of server: ServerProcess) throws -> String {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if let line = server.stderrText.split(separator: "\n").first(where: { $0.contains("available (") }) {
                return String(line)
            }
            Thread.sleep(forTimeInterval: 0.01)
        }
        throw SizingLineMissing(stderr: server.stderrText)
    }

    struct SizingLineMissing: Error {
        let stderr: String
    }
}
