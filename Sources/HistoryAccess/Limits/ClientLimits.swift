/// The limits that keep one client from hurting the others (docs/API.md,
/// "Limits that keep one client from hurting the others"), as the API
/// layer enforces them. `history-server` builds this from its flags;
/// `unlimited` is for tests and embedders that limit elsewhere.
public struct ClientLimits: Sendable, Hashable {
    /// The most bytes of JSON one page or feed answer holds (at least one
    /// message is always answered, whatever its size).
    public var maximumResponseBytes: Int
    /// Reads (pages, feeds, conversations, members) per client; nil: none.
    public var reads: RateLimit?
    /// Writes (conversations created, posts, edits, deletes, member changes) per client; nil: none.
    public var writes: RateLimit?
    /// Long-polls one client may have parked at once; past it 429.
    public var maximumParkedPollsPerClient: Int

    /// 1 MiB: a few hundred ordinary messages, and a ceiling on what one
    /// answer can pin in memory for a client that reads slowly.
    public static let defaultMaximumResponseBytes = 1 << 20
    public static let defaultMaximumParkedPollsPerClient = 100

    public init(maximumResponseBytes: Int = ClientLimits.defaultMaximumResponseBytes, reads: RateLimit? = nil,
                writes: RateLimit? = nil,
                maximumParkedPollsPerClient: Int = ClientLimits.defaultMaximumParkedPollsPerClient) {
        self.maximumResponseBytes = maximumResponseBytes
        self.reads = reads
        self.writes = writes
        self.maximumParkedPollsPerClient = maximumParkedPollsPerClient
    }

    /// No budget, no rates, no poll cap.
    public static let unlimited = ClientLimits(maximumResponseBytes: .max, maximumParkedPollsPerClient: .max)
}
