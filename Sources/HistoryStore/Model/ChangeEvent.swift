/// What happened to a message after some version, compacted: one event per
/// message, carrying its current state.
public struct ChangeEvent: Hashable, Sendable {
    public enum Kind: String, Hashable, Sendable {
        /// Appended after the version asked about (it may have been edited since).
        case created
        /// Existed before, its body changed since.
        case edited
        /// Existed before, tombstoned since.
        case deleted
    }

    public var kind: Kind
    public var message: Message
    /// The version of this change: the message's `version`.
    public var version: Int64 { message.version }

    public init(kind: Kind, message: Message) {
        self.kind = kind
        self.message = message
    }
}

/// The changes after a version: `GET .../events` without the HTTP.
public struct ChangeQuery: Hashable, Sendable {
    public static let defaultLimit = 100
    public static let limitRange = 1...1000

    public var since: Int64
    public var limit: Int
    /// Keep only messages whose id is in `minID...maxID` (either end open).
    public var minID: Int64?
    public var maxID: Int64?
    /// More than this many changes after `since` in the id range: answer
    /// a reset (`ChangeFeed.reset`) instead of them. Nil: never. Counted
    /// in the read's snapshot, at most this many plus one index entries.
    public var resetAfter: Int?

    public init(since: Int64, limit: Int = ChangeQuery.defaultLimit, minID: Int64? = nil, maxID: Int64? = nil,
                resetAfter: Int? = nil) {
        self.since = since
        self.limit = limit
        self.minID = minID
        self.maxID = maxID
        self.resetAfter = resetAfter
    }
}

/// One answer of the change feed.
public struct ChangeFeed: Hashable, Sendable {
    /// In the order of each message's last change (ascending version).
    public var events: [ChangeEvent]
    /// True: call again at once with `version`.
    public var hasMore: Bool
    /// The last event's version when `hasMore`, else the conversation's
    /// current version: the `since` of the next call.
    public var version: Int64
    /// More than `ChangeQuery.resetAfter` changes lay after `since`: no
    /// events, `version` is the current one, and the client reloads the
    /// newest page instead of replaying (docs/API.md, "Live").
    public var reset: Bool

    public init(events: [ChangeEvent], hasMore: Bool, version: Int64, reset: Bool = false) {
        self.events = events
        self.hasMore = hasMore
        self.version = version
        self.reset = reset
    }

    /// The reset answer at `version`, the conversation's current one.
    public static func reset(at version: Int64) -> ChangeFeed {
        ChangeFeed(events: [], hasMore: false, version: version, reset: true)
    }
}
