import Testing
@testable import HistoryAPI

/// The read pool's bookkeeping of recent pool time, on a clock the test
/// hands in, so every figure is exact.
@Suite("Fair share of the read pool")
struct FairShareTests {
    private let second: UInt64 = 1_000_000_000

    @Test func aChargeHalvesEverySecondAndAddsUp() {
        var shares = FairShare()
        #expect(shares.charge(of: "a", at: 5 * second) == 0)
        shares.charge("a", nanoseconds: 8_000, at: 5 * second)
        #expect(shares.charge(of: "a", at: 5 * second) == 8_000)
        #expect(shares.charge(of: "a", at: 6 * second) == 4_000)
        #expect(shares.charge(of: "a", at: 8 * second) == 1_000)
        shares.charge("a", nanoseconds: 500, at: 7 * second)
        #expect(shares.charge(of: "a", at: 7 * second) == 2_500)
        #expect(shares.charge(of: "b", at: 7 * second) == 0)
    }

    @Test func keysIdleForHalfAMinuteAreForgotten() {
        var shares = FairShare()
        shares.charge("old", nanoseconds: 1_000_000, at: 40 * second)
        shares.charge("recent", nanoseconds: 1_000_000, at: 60 * second)
        #expect(shares.rememberedCount == 2)
        shares.charge("new", nanoseconds: 1, at: 80 * second)
        #expect(shares.rememberedCount == 2)
        #expect(shares.charge(of: "old", at: 80 * second) == 0)
        #expect(shares.charge(of: "recent", at: 80 * second) > 0)
    }
}
