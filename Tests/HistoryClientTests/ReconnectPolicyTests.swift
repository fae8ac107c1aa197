import HistoryClient
import Testing

/// The feeds' backoff: exponential, bounded, jittered downwards; a
/// `Retry-After` waited at least as asked, jittered upwards.
@Suite("Reconnect policy")
struct ReconnectPolicyTests {
    @Test func growsExponentiallyUpToItsCeiling() {
        let policy = ReconnectPolicy(initialDelay: .milliseconds(100), multiplier: 2, maximumDelay: .seconds(5), jitter: 0)
        let delays = (1...10).map { policy.delay(afterFailures: $0, randomFraction: 0.5) }
        #expect(Array(delays.prefix(6)) == [100, 200, 400, 800, 1600, 3200].map { Duration.milliseconds($0) })
        #expect(delays.dropFirst(6).allSatisfy { $0 == .seconds(5) })
        #expect(policy.delay(afterFailures: 10_000, randomFraction: 0) == .seconds(5))
    }

    @Test func jitterTakesOffAtMostItsShare() {
        let policy = ReconnectPolicy(initialDelay: .seconds(1), multiplier: 2, maximumDelay: .seconds(5), jitter: 0.2)
        #expect(policy.delay(afterFailures: 1, randomFraction: 0) == .seconds(1))
        #expect(policy.delay(afterFailures: 1, randomFraction: 0.999) > .milliseconds(799))
        #expect(policy.delay(afterFailures: 1, randomFraction: 0.5) == .milliseconds(900))
        let spread = Set((0..<50).map { _ in policy.delay(afterFailures: 3, randomFraction: .random(in: 0..<1)) })
        #expect(spread.count > 1 && spread.allSatisfy { $0 > .milliseconds(3199) && $0 <= .seconds(4) })
    }

    @Test func retryAfterIsAFloorWithJitterAbove() {
        let policy = ReconnectPolicy(initialDelay: .milliseconds(100), jitter: 0.2)
        #expect(policy.delay(retryAfter: .seconds(2), randomFraction: 0) == .seconds(2))
        #expect(policy.delay(retryAfter: .seconds(2), randomFraction: 0.5) == .milliseconds(2200))
        #expect(policy.delay(retryAfter: .zero, randomFraction: 0) == .milliseconds(100))
    }
}
