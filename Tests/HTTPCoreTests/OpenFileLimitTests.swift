import Glibc
import Testing
@testable import HTTPCore

@Suite("Open-file limit")
struct OpenFileLimitTests {
    @Test func theConnectionLimitLeavesTheReserveFree() {
        #expect(connectionLimit(requested: 10_000, descriptorLimit: 20_000, reserve: 64) == 10_000)
        #expect(connectionLimit(requested: 10_000, descriptorLimit: 10_000, reserve: 64) == 9_936)
        #expect(connectionLimit(requested: 10_000, descriptorLimit: 128, reserve: 64) == 64)
        #expect(connectionLimit(requested: 10, descriptorLimit: 128, reserve: 64) == 10)
        #expect(connectionLimit(requested: 10_000, descriptorLimit: 64 + minimumUsefulConnections, reserve: 64)
                == minimumUsefulConnections)
        #expect(connectionLimit(requested: 10_000, descriptorLimit: 64 + minimumUsefulConnections - 1, reserve: 64) == nil)
        #expect(connectionLimit(requested: 10_000, descriptorLimit: -1, reserve: 64) == 10_000)  // unknown: as asked
    }

    /// With the soft limit lowered below the hard one (as many systems start
    /// a process), raising lifts it to the hard limit, and returns the
    /// limit `getrlimit` then reports.
    @Test func raisingLiftsTheSoftLimitToTheHardOneAndReturnsIt() throws {
        var before = rlimit()
        try #require(getrlimit(Int32(RLIMIT_NOFILE.rawValue), &before) == 0)
        let hardIsFinite = before.rlim_max != rlim_t.max
        // Lowered by one only: other tests in this process hold many sockets.
        var lowered = before
        lowered.rlim_cur = (hardIsFinite ? before.rlim_max : before.rlim_cur) - 1
        try #require(setrlimit(Int32(RLIMIT_NOFILE.rawValue), &lowered) == 0)

        let returned = raiseOpenFileLimit()

        var after = rlimit()
        try #require(getrlimit(Int32(RLIMIT_NOFILE.rawValue), &after) == 0)
        #expect(returned == Int(after.rlim_cur))
        if hardIsFinite {
            #expect(after.rlim_cur == before.rlim_max)
        }
    }
}
