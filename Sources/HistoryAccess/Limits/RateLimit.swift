/// A token-bucket rate: `perSecond` requests a second on average, up to
/// `burst` at once after a quiet spell.
public struct RateLimit: Sendable, Hashable {
    public var perSecond: Int
    public var burst: Int

    /// - Parameter burst: nil for twice the rate, room for a client that
    ///   catches up after a short pause without being refused.
    public init(perSecond: Int, burst: Int? = nil) {
        precondition(perSecond > 0, "a rate limit needs a positive rate; leave it nil to disable it")
        self.perSecond = perSecond
        self.burst = max(burst ?? (perSecond > Int.max / 2 ? Int.max : 2 * perSecond), 1)
    }

    /// Tokens mode without rate flags: generous for a person in a chat app
    /// (scrolling fast through history is a few pages a second; a feed
    /// long-poll is one read per change), far below what fills a disk.
    public static let defaultReads = RateLimit(perSecond: 50, burst: 100)
    public static let defaultWrites = RateLimit(perSecond: 10, burst: 20)
}
