/// How the live feeds behave (docs/API.md, "Live"): how long a stream
/// lasts, how often a quiet one says it is alive, and how far behind a
/// client may be before a feed answers `reset` instead of the changes.
/// `history-server` fills it from `--max-stream-seconds` and
/// `--feed-reset-after`; tests shorten the rest.
public struct FeedSettings: Sendable, Hashable {
    /// A stream ends by itself after this long, so proxies and clients
    /// reconnect (with `Last-Event-ID`) and no connection lives forever.
    public var maximumStreamDuration: Duration
    /// A comment line after this much silence on a stream.
    public var heartbeatInterval: Duration
    /// More than this many changes after `since` in the asked range: the
    /// feed answers `reset` (nil: never).
    public var resetAfter: Int?

    public static let defaultMaximumStreamSeconds = 3600
    public static let defaultResetAfter = 1000
    /// What `--max-stream-seconds` accepts.
    public static let maximumStreamSecondsRange = 1...86_400
    /// What `--feed-reset-after` accepts.
    public static let resetAfterRange = 1...1_000_000

    public init(maximumStreamDuration: Duration = .seconds(FeedSettings.defaultMaximumStreamSeconds),
                heartbeatInterval: Duration = .seconds(20),
                resetAfter: Int? = FeedSettings.defaultResetAfter) {
        self.maximumStreamDuration = maximumStreamDuration
        self.heartbeatInterval = heartbeatInterval
        self.resetAfter = resetAfter
    }
}
