import Dispatch
import Glibc
import HistoryTestSupport
import Testing
@testable import HTTPCore

/// The shared `Date` line, read by many threads at once while seconds
/// turn: every line appended is whole and of a second within the run.
/// The readers are threads of their own (`onOwnThread`), never the
/// test runner's: busy for seconds, they must not starve other tests.
@Suite("HTTPDate")
struct HTTPDateTests {
    @Test func linesReadByManyThreadsAcrossSecondsAreWhole() async throws {
        let start = time(nil)
        // Every line a reader may see: the seconds of the run (it lasts
        // 2.3 s, so 4 seconds cover it with room).
        let valid = Set((start...start + 4).map { HTTPDate.headerLine(for: $0) })
        let deadline = DispatchTime.now() + .milliseconds(2_300)
        let results = try await withThrowingTaskGroup(of: (lines: Int, torn: Int).self) { group in
            for _ in 0..<8 {
                group.addTask {
                    try await onOwnThread {
                        var output: [UInt8] = []
                        var lines = 0
                        var torn = 0
                        // Bounded in count and in time: at most 2,000,000 lines, 2.3 s.
                        while lines < 2_000_000 && DispatchTime.now() < deadline {
                            for _ in 0..<1_000 {
                                output.removeAll(keepingCapacity: true)
                                HTTPDate.appendHeaderLine(to: &output)
                                if !valid.contains(output) { torn += 1 }
                            }
                            lines += 1_000
                        }
                        return (lines, torn)
                    }
                }
            }
            return try await group.reduce(into: [(lines: Int, torn: Int)]()) { $0.append($1) }
        }
        #expect(time(nil) - start >= 2, "the run crossed at least two seconds")
        #expect(results.allSatisfy { $0.lines >= 1_000 })
        #expect(results.map(\.torn).reduce(0, +) == 0)
        var output: [UInt8] = []
        HTTPDate.appendHeaderLine(to: &output)
        #expect(output.count == HTTPDate.lineLength)
    }
}
