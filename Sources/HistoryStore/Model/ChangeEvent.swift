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

    public init(since: Int64, limit: Int = ChangeQuery.defaultLimit, minID: Int64? = nil, maxID: Int64? = nil) {
        self.since = since
        self.limit = limit
        self.minID = minID
        self.maxID = maxID
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

    public init(events: [ChangeEvent], hasMore: Bool, version: Int64) {
        self.events = events
        self.hasMore = hasMore
        self.version = version
    }
}
