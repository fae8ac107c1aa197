/// One change of the compacted event feed: a message changed after the
/// `since` version, with its current state.
public struct HistoryEvent: Codable, Hashable, Sendable {
    public enum Kind: String, Codable, Hashable, Sendable {
        /// Appended after `since` (it may have been edited since, too).
        case created
        /// Existed before `since`; its body changed since.
        case edited
        /// Existed before `since`; tombstoned since.
        case deleted
    }

    /// The version of this change: equal to `message.version`.
    public var version: Int64
    public var kind: Kind
    public var message: HistoryMessage

    public init(version: Int64, kind: Kind, message: HistoryMessage) {
        self.version = version
        self.kind = kind
        self.message = message
    }

    enum CodingKeys: String, CodingKey {
        case version
        case kind = "type"
        case message
    }
}

/// One answer of `GET .../events`.
public struct HistoryEventBatch: Codable, Hashable, Sendable {
    /// Ascending by version; every message at most once.
    public var events: [HistoryEvent]
    /// True: more changes are waiting; ask again at once with ``version``.
    public var hasMore: Bool
    /// The `since` of the next call.
    public var version: Int64

    public init(events: [HistoryEvent], hasMore: Bool, version: Int64) {
        self.events = events
        self.hasMore = hasMore
        self.version = version
    }

    enum CodingKeys: String, CodingKey {
        case events
        case hasMore = "has_more"
        case version
    }
}
