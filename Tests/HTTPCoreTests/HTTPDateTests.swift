import Dispatch
import Glibc
import Synchronization
import Testing
@testable import HTTPCore

/// The shared `Date` line, read by many threads at once while seconds
/// turn: every line appended is whole and of a second within the run.
@Suite("HTTPDate")
struct HTTPDateTests {
    @Test func linesReadByManyThreadsAcrossSecondsAreWhole() {
        let start = time(nil)
        let torn = Atomic<Int>(0)
        let appended = Atomic<Int>(0)
        let deadline = DispatchTime.now() + .milliseconds(2_300)
        // Bounded in count and in time: at most 8 × 2,000,000 lines, 2.3 s.
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            var output: [UInt8] = []
            var count = 0
            while count < 2_000_000 && DispatchTime.now() < deadline {
                for _ in 0..<1_000 {
                    output.removeAll(keepingCapacity: true)
                    HTTPDate.appendHeaderLine(to: &output)
                    let end = time(nil)
                    if !(start...end).contains(where: { HTTPDate.headerLine(for: $0) == output }) {
                        torn.add(1, ordering: .relaxed)
                    }
                }
                count += 1_000
            }
            appended.add(count, ordering: .relaxed)
        }
        #expect(time(nil) - start >= 2, "the run crossed at least two seconds")
        #expect(appended.load(ordering: .relaxed) >= 8_000)
        #expect(torn.load(ordering: .relaxed) == 0)
        var output: [UInt8] = []
        HTTPDate.appendHeaderLine(to: &output)
        #expect(output.count == HTTPDate.lineLength)
    }
}
