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
    /// True: more changes lay after `since` than the server replays
    /// (`--feed-reset-after`); ``events`` is empty and ``version`` is the
    /// conversation's current version. Reopen at the newest page (read at
    /// ``version`` or later) and follow from there instead of replaying.
    public var reset: Bool
    /// Everyone typing now, when the answer reports it (a long-poll asked
    /// with ``EventQuery/typing``, or the stream's `typing` event); nil when
    /// it does not.
    public var typing: [String]?

    public init(events: [HistoryEvent], hasMore: Bool, version: Int64, reset: Bool = false,
                typing: [String]? = nil) {
        self.events = events
        self.hasMore = hasMore
        self.version = version
        self.reset = reset
        self.typing = typing
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        events = try container.decode([HistoryEvent].self, forKey: .events)
        hasMore = try container.decode(Bool.self, forKey: .hasMore)
        version = try container.decode(Int64.self, forKey: .version)
        reset = try container.decodeIfPresent(Bool.self, forKey: .reset) ?? false
        typing = try container.decodeIfPresent([String].self, forKey: .typing)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(events, forKey: .events)
        try container.encode(hasMore, forKey: .hasMore)
        try container.encode(version, forKey: .version)
        if reset { try container.encode(reset, forKey: .reset) }
        try container.encodeIfPresent(typing, forKey: .typing)
    }

    enum CodingKeys: String, CodingKey {
        case events
        case hasMore = "has_more"
        case version
        case reset
        case typing
    }
}
