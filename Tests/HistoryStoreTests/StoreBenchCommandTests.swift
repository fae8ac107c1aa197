import Foundation
import HistoryTestSupport
import Testing

/// The store's benchmark command end to end at toy sizes: it loads real
/// conversations into a file, checks every page it times is full, and
/// prints each figure docs/performance.md quotes. Its figures are not asserted (timing
/// goals live in the release-build run, not in tests); that it runs, checks
/// and reports is.
@Suite("history-store-bench")
struct StoreBenchCommandTests {
    @Test(.timeLimit(.minutes(2)))
    func printsEveryFigureAtToySizes() throws {
        try #require(FileManager.default.isExecutableFile(atPath: CrashTests.benchBinary.path),
                     "history-store-bench is not built at \(CrashTests.benchBinary.path)")
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let folder = directory.url

        let bench = Process()
        bench.executableURL = CrashTests.benchBinary
        bench.arguments = ["--messages", "600", "--short-conversations", "4", "--short-messages", "60",
                           "--limit", "20", "--pages", "50", "--append-seconds", "0.05", "--append-rounds", "2",
                           "--appenders", "1", "--appenders", "4", "--directory", folder.path]
        let output = Pipe()
        bench.standardOutput = output
        bench.standardError = output
        try bench.runSerialized()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        bench.waitUntilExit()

        #expect(bench.terminationStatus == 0, "\(text)")
        for label in ["(a) newest page, big conversation", "(b) random before page deep in it",
                      "(c) newest page, random short one", "(b0) one deep page, repeated",
                      "(c0) one short one, repeated", "goal (b), (c) <= 1.15x (a):",
                      "of which depth and layout (b0), (c0):", "  1 appender ", "  4 appenders",
                      "4:1 ratio: median of rounds"] {
            #expect(text.contains(label), "missing \(label) in:\n\(text)")
        }
        // Without --keep the run leaves nothing behind.
        let left = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        #expect(left.isEmpty, "left behind: \(left)")
    }
}
