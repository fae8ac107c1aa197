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

    @Test func raisingReturnsTheLimitInForce() {
        let limit = raiseOpenFileLimit()
        #expect(limit == -1 || limit >= 3)
    }
}
