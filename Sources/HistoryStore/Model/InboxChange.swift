/// The user feed: a user's inbox rows changed after an `activity` value.
public struct InboxChangeQuery: Hashable, Sendable {
    public static let defaultLimit = 100
    public static let limitRange = 1...1000

    public var since: Int64
    public var limit: Int
    /// More than this many conversations changed after `since`: answer a
    /// reset (`InboxChangeFeed.reset`) instead of them. Nil: never.
    public var resetAfter: Int?

    public init(since: Int64 = 0, limit: Int = InboxChangeQuery.defaultLimit, resetAfter: Int? = nil) {
        self.since = since
        self.limit = limit
        self.resetAfter = resetAfter
    }
}

/// What changed in one conversation of a user's inbox, compacted: its
/// current row, or the end of the user's membership.
public enum InboxEvent: Hashable, Sendable {
    case updated(InboxRow)
    case removed(conversationID: ConversationID, activity: Int64)

    /// The change's value of the server-wide `activity` counter.
    public var activity: Int64 {
        switch self {
        case .updated(let row): row.activity
        case .removed(_, let activity): activity
        }
    }

    public var conversationID: ConversationID {
        switch self {
        case .updated(let row): row.conversation.id
        case .removed(let id, _): id
        }
    }
}

/// One answer of the user feed.
public struct InboxChangeFeed: Hashable, Sendable {
    /// One per conversation, ascending `activity`.
    public var events: [InboxEvent]
    /// True: call again at once with `activity`.
    public var hasMore: Bool
    /// The last event's activity when `hasMore`, else the current value of
    /// the counter: the `since` of the next call.
    public var activity: Int64
    /// More than `InboxChangeQuery.resetAfter` changes lay after `since`:
    /// no events, `activity` is the current one, and the client reloads
    /// the inbox's first page instead of replaying.
    public var reset: Bool

    public init(events: [InboxEvent], hasMore: Bool, activity: Int64, reset: Bool = false) {
        self.events = events
        self.hasMore = hasMore
        self.activity = activity
        self.reset = reset
    }
}

// MARK: - Rules

extension InboxChangeQuery {
    public static let sinceRule = IntegerRule(.since, 0...Int64.max,
                                              requirement: "must be an activity value, an integer from 0 to the server's activity")
    public static let limitRule = IntegerRule(.limit, limitRange)

    /// `since` above the current activity is found by the read itself.
    public func check() throws(RuleViolation) {
        try Self.sinceRule.check(since)
        try Self.limitRule.check(Int64(limit))
    }
}
