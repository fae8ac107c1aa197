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
        let results = try await withThrowingTaskGroup(of: (lines: Int, torn: Int, seconds: Int).self) { group in
            for _ in 0..<8 {
                group.addTask {
                    try await onOwnThread {
                        // Each reader runs 2.3 s from its own start (a
                        // loaded machine may start them late), so it
                        // crosses at least two second boundaries; every
                        // line it may see is one of those seconds'.
                        let start = time(nil)
                        let valid = Set((start...start + 4).map { HTTPDate.headerLine(for: $0) })
                        let deadline = DispatchTime.now() + .milliseconds(2_300)
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
                        return (lines, torn, time(nil) - start)
                    }
                }
            }
            return try await group.reduce(into: [(lines: Int, torn: Int, seconds: Int)]()) { $0.append($1) }
        }
        #expect(results.allSatisfy { $0.seconds >= 2 }, "each reader crossed at least two seconds")
        #expect(results.allSatisfy { $0.lines >= 1_000 })
        #expect(results.map(\.torn).reduce(0, +) == 0)
        var output: [UInt8] = []
        HTTPDate.appendHeaderLine(to: &output)
        #expect(output.count == HTTPDate.lineLength)
    }
}
