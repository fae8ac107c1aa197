import Testing
@testable import HistoryAccess

/// The token bucket's arithmetic and the bounded client table, at chosen
/// instants (nanoseconds) rather than by waiting.
@Suite("Rate limiter")
struct RateLimiterTests {
    static let second: UInt64 = 1_000_000_000

    @Test func aBucketSpendsItsBurstThenRefillsAtItsRate() {
        let limit = RateLimit(perSecond: 2, burst: 4)
        var bucket = TokenBucket(limit: limit, now: 0)
        let spent = (0..<4).map { _ in bucket.take(limit, now: 0) }
        #expect(spent.map(\.allowed) == [true, true, true, true])
        #expect(spent.map(\.remaining) == [3, 2, 1, 0])
        let refused = bucket.take(limit, now: 0)
        #expect(!refused.allowed)
        #expect(refused.retryAfterSeconds == 1, "half a second for one token, rounded up")
        #expect(refused.resetSeconds == 2, "four tokens at two a second")
        #expect(refused.limit == 4)
        // Half a second later one token is back.
        #expect(bucket.take(limit, now: Self.second / 2).allowed)
        #expect(!bucket.take(limit, now: Self.second / 2).allowed)
        // Never more than the burst, however long the pause.
        let afterPause = bucket.take(limit, now: 3600 * Self.second)
        #expect(afterPause.allowed && afterPause.remaining == 3)
    }

    @Test func retryAfterIsAtLeastOneSecondEvenForFastRates() {
        let limit = RateLimit(perSecond: 1000, burst: 1)
        var bucket = TokenBucket(limit: limit, now: 0)
        #expect(bucket.take(limit, now: 0).allowed)
        let refused = bucket.take(limit, now: 0)
        #expect(!refused.allowed && refused.retryAfterSeconds == 1)
    }

    @Test func theBurstDefaultsToTwiceTheRate() {
        #expect(RateLimit(perSecond: 7).burst == 14)
        #expect(RateLimit(perSecond: 7, burst: 3).burst == 3)
        #expect(RateLimit(perSecond: Int.max).burst == Int.max)
    }

    @Test func clientsAreCountedApart() {
        let limiter = RateLimiter(limit: RateLimit(perSecond: 1, burst: 1))
        #expect(limiter.take(.peer("10.0.0.1"), now: 0).allowed)
        #expect(!limiter.take(.peer("10.0.0.1"), now: 0).allowed)
        #expect(limiter.take(.peer("10.0.0.2"), now: 0).allowed)
        #expect(limiter.take(.subject("10.0.0.1"), now: 0).allowed, "a subject is never an address")
    }

    @Test func aFloodOfDistinctClientsKeepsTheTableBounded() {
        let limiter = RateLimiter(limit: RateLimit(perSecond: 1, burst: 5), capacity: 1000)
        for index in 0..<100_000 {
            _ = limiter.take(.peer("10.\(index >> 16).\((index >> 8) & 255).\(index & 255)"), now: UInt64(index))
            #expect(limiter.count <= 1000)
        }
    }

    @Test func aBusyClientSurvivesAFloodAndKeepsItsEmptyBucket() {
        let limiter = RateLimiter(limit: RateLimit(perSecond: 1, burst: 2), capacity: 100)
        let busy = ClientKey.subject("busy")
        #expect(limiter.take(busy, now: 0).allowed)
        #expect(limiter.take(busy, now: 0).allowed)
        // Newer clients than the busy one's last request push it out only
        // once it is the idlest; refusals keep it fresh.
        for index in 0..<1000 {
            #expect(!limiter.take(busy, now: UInt64(index)).allowed)
            _ = limiter.take(.peer("p\(index)"), now: UInt64(index))
        }
    }

    @Test func theClientKeyIsTheSubjectOrTheHostWithoutItsPort() {
        #expect(ClientKey.host(ofRemoteAddress: "127.0.0.1:53211") == "127.0.0.1")
        #expect(ClientKey.host(ofRemoteAddress: "[::1]:8080") == "::1")
        #expect(ClientKey.host(ofRemoteAddress: "[fe80::1%eth0]:1") == "fe80::1%eth0")
        #expect(ClientKey.host(ofRemoteAddress: "unknown") == "unknown")
    }
}
