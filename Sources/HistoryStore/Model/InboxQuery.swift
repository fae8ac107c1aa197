/// A page of a user's inbox: most recent message first, conversations
/// without messages last (by id). Keyset, never an offset: `cursor` is the
/// opaque `nextCursor` of the page before (nil for the first page).
public struct InboxQuery: Hashable, Sendable {
    public static let defaultLimit = 50
    public static let limitRange = 1...200

    /// Opaque; the store decodes it and refuses one it did not make with
    /// `.invalid(field: "cursor", ...)`.
    public var cursor: String?
    public var limit: Int

    public init(cursor: String? = nil, limit: Int = InboxQuery.defaultLimit) {
        self.cursor = cursor
        self.limit = limit
    }
}

/// One page of a user's inbox.
public struct InboxPage: Hashable, Sendable {
    public var rows: [InboxRow]
    /// The cursor of the next page; nil on the last one.
    public var nextCursor: String?
    /// The server-wide `activity` counter in the same snapshot as the rows:
    /// the `since` that makes the user feed tell what changed after them.
    public var activity: Int64

    public init(rows: [InboxRow], nextCursor: String?, activity: Int64) {
        self.rows = rows
        self.nextCursor = nextCursor
        self.activity = activity
    }
}

// MARK: - Rules

extension InboxQuery {
    public static let limitRule = IntegerRule(.limit, limitRange)

    /// The rules the HTTP layer checks before it asks and the store before
    /// it reads; the cursor's decoding is the store's.
    public func check() throws(RuleViolation) {
        try Self.limitRule.check(Int64(limit))
    }
}
