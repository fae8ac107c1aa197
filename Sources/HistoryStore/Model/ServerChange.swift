/// The backend feed (`GET /v1/events`): every change on the server, one
/// event per change, in `activity` order. Unlike the conversation and user
/// feeds it is not compacted: an app backend sending push notifications or
/// indexing needs each change once, not only the latest state.
public struct ServerChangeQuery: Hashable, Sendable {
    public static let defaultLimit = 100
    public static let limitRange = 1...1000

    public var since: Int64
    public var limit: Int

    public init(since: Int64 = 0, limit: Int = ServerChangeQuery.defaultLimit) {
        self.since = since
        self.limit = limit
    }
}

/// One change of the backend feed.
public struct ServerChangeEvent: Hashable, Sendable {
    /// The change's kind; the raw values are the stored ones (the
    /// `change_log.kind` column): never renumber them.
    public enum Kind: Int64, Hashable, Sendable, CaseIterable {
        case created = 0
        case edited = 1
        case deleted = 2
        case memberAdded = 3
        case memberChanged = 4
        case memberRemoved = 5

        /// The contract's `type`.
        public var name: String {
            switch self {
            case .created: "created"
            case .edited: "edited"
            case .deleted: "deleted"
            case .memberAdded: "member_added"
            case .memberChanged: "member_changed"
            case .memberRemoved: "member_removed"
            }
        }
    }

    /// What the change concerns.
    public enum Subject: Hashable, Sendable {
        /// The message as it is now (a later edit or deletion shows: a
        /// deleted message's text is erased from the feed too).
        case message(Message)
        /// The member as the change left it.
        case member(Member)
        /// The user whose membership ended.
        case removedMember(UserID)
    }

    public var activity: Int64
    public var kind: Kind
    public var conversationID: ConversationID
    public var subject: Subject

    public init(activity: Int64, kind: Kind, conversationID: ConversationID, subject: Subject) {
        self.activity = activity
        self.kind = kind
        self.conversationID = conversationID
        self.subject = subject
    }
}

/// One answer of the backend feed.
public struct ServerChangeFeed: Hashable, Sendable {
    /// Ascending `activity`, one per change.
    public var events: [ServerChangeEvent]
    /// True: call again at once with `activity`.
    public var hasMore: Bool
    /// The last event's activity when `hasMore`, else the server's current
    /// activity: the `since` of the next call.
    public var activity: Int64

    public init(events: [ServerChangeEvent], hasMore: Bool, activity: Int64) {
        self.events = events
        self.hasMore = hasMore
        self.activity = activity
    }
}

/// A change the writer records in the change log, in the transaction that
/// makes it: the log is what the backend feed reads.
package struct ChangeLogEntry: Sendable {
    package let activity: Int64
    package let conversationSeq: Int64
    package let kind: ServerChangeEvent.Kind
    package let messageID: Int64?
    package let member: Member?
    package let removedUser: UserID?

    package static func message(_ kind: ServerChangeEvent.Kind, id: Int64, seq: Int64, activity: Int64) -> ChangeLogEntry {
        ChangeLogEntry(activity: activity, conversationSeq: seq, kind: kind, messageID: id, member: nil, removedUser: nil)
    }

    package static func member(_ kind: ServerChangeEvent.Kind, _ member: Member, seq: Int64, activity: Int64) -> ChangeLogEntry {
        ChangeLogEntry(activity: activity, conversationSeq: seq, kind: kind, messageID: nil, member: member, removedUser: nil)
    }

    package static func removed(_ user: UserID, seq: Int64, activity: Int64) -> ChangeLogEntry {
        ChangeLogEntry(activity: activity, conversationSeq: seq, kind: .memberRemoved, messageID: nil, member: nil,
                       removedUser: user)
    }

    /// The stored `user_id`, `role` and `joined_at` columns.
    package var userID: String? { member?.userID.rawValue ?? removedUser?.rawValue }
    package var role: String? { member?.role.rawValue }
    package var joinedAt: Int64? { member?.joinedAt.millisecondsSinceEpoch }
}

// MARK: - Rules

extension ServerChangeQuery {
    public static let sinceRule = IntegerRule(.since, 0...Int64.max,
                                              requirement: "must be an activity value, an integer from 0 to the server's activity")
    public static let limitRule = IntegerRule(.limit, limitRange)

    /// `since` above the current activity is found by the read itself.
    public func check() throws(RuleViolation) {
        try Self.sinceRule.check(since)
        try Self.limitRule.check(Int64(limit))
    }

    package func validate() throws(StoreError) {
        do {
            try check()
        } catch {
            throw StoreError(error)
        }
    }
}

extension ServerChangeEvent.Kind {
    /// A stored kind; nil for a value this code never writes.
    package init?(stored: Int64) {
        self.init(rawValue: stored)
    }
}
