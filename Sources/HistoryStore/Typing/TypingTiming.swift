/// How long "typing" lasts, how often one user may change it, and how many
/// typers one instance keeps: the contract's 6 s and 2 s (docs/API.md,
/// "Live"), shorter in tests so that an expiry is seen in a second.
public struct TypingTiming: Hashable, Sendable {
    /// A `true` shows the user this long unless renewed.
    public var lasts: Duration
    /// A call this soon after the caller's last accepted one is answered
    /// and dropped: at most one broadcast per user and conversation per
    /// period, whatever a client sends.
    public var quietPeriod: Duration
    /// The most users shown typing in one conversation; a newcomer beyond
    /// it is not shown until someone stops. The list goes into every
    /// answer of the conversation's polls and streams: it stays small.
    public var maximumPerConversation: Int
    /// The most entries (typers, and callers remembered for the quiet
    /// period) the whole board keeps, whatever the number of conversations.
    public var maximumEntries: Int

    public init(lasts: Duration = .seconds(6), quietPeriod: Duration = .seconds(2),
                maximumPerConversation: Int = 64, maximumEntries: Int = 100_000) {
        self.lasts = lasts
        self.quietPeriod = quietPeriod
        self.maximumPerConversation = maximumPerConversation
        self.maximumEntries = maximumEntries
    }

    /// The contract's values.
    public static let standard = TypingTiming()

    /// How often expired typers are swept: an expiry is seen at most this
    /// late (250 ms at the contract's 6 s), and a sweep of an empty board
    /// costs a lock and a comparison.
    var sweepInterval: Duration {
        max(lasts / 24, .milliseconds(10))
    }
}
