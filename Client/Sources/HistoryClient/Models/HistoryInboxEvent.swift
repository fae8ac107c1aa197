/// One change of a user's inbox feed (`GET /v1/users/{uid}/events`).
///
/// The feed is compacted: a conversation that changed several times since
/// `since` appears once, in its current state.
public enum HistoryInboxEvent: Codable, Hashable, Sendable {
    /// The conversation's row changed after `since` (a message, an edit or
    /// delete, a member, the user's marker moved, or the user joined): its
    /// current row.
    case updated(HistoryInboxRow)
    /// The user's membership ended after `since` (and was not renewed).
    case removed(conversationID: String, activity: Int64)

    /// The change counter of this event: the row's activity, or the removal's.
    public var activity: Int64 {
        switch self {
        case .updated(let row): row.activity
        case .removed(_, let activity): activity
        }
    }

    public var conversationID: String {
        switch self {
        case .updated(let row): row.conversation.id
        case .removed(let conversationID, _): conversationID
        }
    }

    private enum Kind: String, Codable {
        case updated
        case removed
    }

    private enum CodingKeys: String, CodingKey {
        case type
        case conversationID = "conversation_id"
        case activity
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        switch try container.decode(Kind.self, forKey: .type) {
        case .updated:
            self = .updated(try HistoryInboxRow(from: decoder))
        case .removed:
            self = .removed(conversationID: try container.decode(String.self, forKey: .conversationID),
                            activity: try container.decode(Int64.self, forKey: .activity))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .updated(let row):
            try row.encode(to: encoder)
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(Kind.updated, forKey: .type)
        case .removed(let conversationID, let activity):
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(Kind.removed, forKey: .type)
            try container.encode(conversationID, forKey: .conversationID)
            try container.encode(activity, forKey: .activity)
        }
    }
}

/// One answer of the inbox feed.
public struct HistoryInboxEventBatch: Codable, Hashable, Sendable {
    /// Ascending by activity; each conversation at most once.
    public var events: [HistoryInboxEvent]
    /// True: more changes are waiting; ask again at once with ``activity``.
    public var hasMore: Bool
    /// The `since` of the next call.
    public var activity: Int64
    /// True: more changes lay after `since` than the server replays;
    /// ``events`` is empty. Reload the inbox's first page and follow from
    /// ``activity`` instead of replaying.
    public var reset: Bool

    public init(events: [HistoryInboxEvent], hasMore: Bool, activity: Int64, reset: Bool = false) {
        self.events = events
        self.hasMore = hasMore
        self.activity = activity
        self.reset = reset
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        events = try container.decode([HistoryInboxEvent].self, forKey: .events)
        hasMore = try container.decode(Bool.self, forKey: .hasMore)
        activity = try container.decode(Int64.self, forKey: .activity)
        reset = try container.decodeIfPresent(Bool.self, forKey: .reset) ?? false
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(events, forKey: .events)
        try container.encode(hasMore, forKey: .hasMore)
        try container.encode(activity, forKey: .activity)
        if reset { try container.encode(reset, forKey: .reset) }
    }

    enum CodingKeys: String, CodingKey {
        case events
        case hasMore = "has_more"
        case activity
        case reset
    }
}
