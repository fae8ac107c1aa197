/// One client's allowance under a `RateLimit`: it holds up to `burst`
/// tokens, gains `perSecond` of them a second, and each request takes one.
///
/// Time is passed in (nanoseconds of a monotonic clock), so the arithmetic
/// is tested with chosen instants rather than by waiting.
public struct TokenBucket: Sendable {
    /// Tokens left, fractional between refills.
    private(set) var tokens: Double
    /// When `tokens` was last brought up to date.
    private(set) var updatedAt: UInt64

    /// A new client starts with a full bucket.
    init(limit: RateLimit, now: UInt64) {
        tokens = Double(limit.burst)
        updatedAt = now
    }

    /// What one request learned from the bucket; the `RateLimit-*` headers
    /// and `Retry-After` are made from it.
    public struct Decision: Sendable, Hashable {
        public var allowed: Bool
        /// The bucket's size: what a client may spend at once.
        public var limit: Int
        /// Whole requests left after this one.
        public var remaining: Int
        /// Seconds until the bucket is full again (rounded up).
        public var resetSeconds: Int
        /// Seconds until one request is allowed again (rounded up, at least
        /// 1); 0 when this one was allowed.
        public var retryAfterSeconds: Int
    }

    /// Refills for the time passed, then takes one token if there is one.
    mutating func take(_ limit: RateLimit, now: UInt64) -> Decision {
        refill(limit, now: now)
        let rate = Double(limit.perSecond)
        let allowed = tokens >= 1
        if allowed { tokens -= 1 }
        let missing = Double(limit.burst) - tokens
        return Decision(allowed: allowed, limit: limit.burst, remaining: Int(tokens.rounded(.down)),
                        resetSeconds: Int((missing / rate).rounded(.up)),
                        retryAfterSeconds: allowed ? 0 : max(1, Int(((1 - tokens) / rate).rounded(.up))))
    }

    /// Returns the token a request took, when it turned out not to owe it.
    mutating func giveBack(_ limit: RateLimit, now: UInt64) {
        refill(limit, now: now)
        tokens = min(Double(limit.burst), tokens + 1)
    }

    /// True when the bucket would be full at `now`: forgetting it then
    /// changes nothing, since a new bucket starts full.
    func isFull(_ limit: RateLimit, now: UInt64) -> Bool {
        var copy = self
        copy.refill(limit, now: now)
        return copy.tokens >= Double(limit.burst)
    }

    private mutating func refill(_ limit: RateLimit, now: UInt64) {
        guard now > updatedAt else { return }
        let seconds = Double(now - updatedAt) / 1e9
        tokens = min(Double(limit.burst), tokens + seconds * Double(limit.perSecond))
        updatedAt = now
    }
}
