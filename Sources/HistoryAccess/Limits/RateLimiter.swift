import Synchronization

/// The token buckets of every client under one `RateLimit` (one limiter
/// for reads, one for writes), in a table of bounded size.
///
/// Bounded because the keys come from outside: a flood from many peer
/// addresses (or many token subjects) must not grow memory without end.
/// Two rules keep it small, and neither lets a client past its rate:
/// - a bucket that has refilled completely is the same as no bucket (a
///   new one starts full), so it is forgotten whenever the table is swept;
/// - when more than half of `capacity` is left after a sweep, the buckets
///   used longest ago are forgotten until it is half full (so a sweep, which
///   reads the whole table, comes at most once per `capacity / 2` new clients). Such a client gets a
///   full bucket on its next request: the price of the bound, paid only
///   under a flood of distinct clients, and only by the idlest of them.
public final class RateLimiter: Sendable {
    let limit: RateLimit
    let capacity: Int
    private let buckets: Mutex<[ClientKey: TokenBucket]>

    /// - Parameter capacity: the most clients remembered at once.
    public init(limit: RateLimit, capacity: Int = 100_000) {
        self.limit = limit
        self.capacity = max(capacity, 2)
        buckets = Mutex([:])
    }

    /// Takes one request of `key` at `now` (monotonic nanoseconds).
    public func take(_ key: ClientKey, now: UInt64) -> TokenBucket.Decision {
        buckets.withLock { buckets in
            if buckets[key] == nil && buckets.count >= capacity { evict(&buckets, now: now) }
            var bucket = buckets[key] ?? TokenBucket(limit: limit, now: now)
            let decision = bucket.take(limit, now: now)
            buckets[key] = bucket
            return decision
        }
    }

    /// Returns the token `take` took, for a request that did not owe it.
    public func giveBack(_ key: ClientKey, now: UInt64) {
        buckets.withLock { buckets in buckets[key]?.giveBack(limit, now: now) }
    }

    /// Clients remembered now (for tests and metrics).
    var count: Int { buckets.withLock { $0.count } }

    private func evict(_ buckets: inout [ClientKey: TokenBucket], now: UInt64) {
        buckets = buckets.filter { !$0.value.isFull(limit, now: now) }
        guard buckets.count >= capacity / 2 else { return }
        let byAge = buckets.sorted { $0.value.updatedAt < $1.value.updatedAt }
        for (key, _) in byAge.prefix(buckets.count - capacity / 2) { buckets.removeValue(forKey: key) }
    }
}
