/// Where a page starts: the id cursors of the contract, never an offset.
public enum PageCursor: Hashable, Sendable {
    /// The newest messages: the bottom of the chat.
    case newest
    /// The messages closest below the id (ids < id).
    case before(Int64)
    /// The messages closest above the id (ids > id).
    case after(Int64)
    /// The messages closest above `after` that are below `before`: a known gap.
    case between(after: Int64, before: Int64)
    /// `floor(limit/2)` older messages, the anchor when it exists, then newer ones.
    case around(Int64)
    /// `around` the first message created at or after the time (the
    /// smallest id among them); the newest page, its anchor not found, when
    /// none is.
    case aroundTime(Timestamp)
}

/// A page request: cursor, size, and the optional trimming window.
public struct PageQuery: Hashable, Sendable {
    public static let defaultLimit = 50
    public static let limitRange = 1...200
    public static let windowRange = 1...10_000

    public var cursor: PageCursor
    public var limit: Int
    /// Only with `.after`: when more than `window` messages lie above the
    /// cursor, the store answers the newest page instead, with `reset` true.
    public var window: Int?
    /// The most bytes of JSON the answer may hold (`--max-response-bytes`),
    /// or nil. A page that reads away from its cursor (newest, `before`,
    /// `after`) stops reading once the text of the messages read is already
    /// over it: their JSON is larger still, so the answer's trim (which
    /// keeps the messages next to the cursor) could keep none of the rest.
    /// The answer is the same; a page of large messages costs a few rows
    /// instead of `limit`. The flags come from the conversation's kept
    /// ids, so they stay exact.
    public var byteBudget: Int?

    public init(cursor: PageCursor = .newest, limit: Int = PageQuery.defaultLimit, window: Int? = nil) {
        self.cursor = cursor
        self.limit = limit
        self.window = window
    }
}

// MARK: - Rules

extension PageQuery {
    public static let limitRule = IntegerRule(.limit, limitRange)
    public static let windowRule = IntegerRule(.window, windowRange)

    // A cursor is a position, not a message: any id from 0 (below every
    // message, so `after(0)` starts at the first one) to Int64.max. Built
    // once: the page path reads three of them per request.
    public static let beforeRule = cursorRule(.before)
    public static let afterRule = cursorRule(.after)
    public static let aroundRule = cursorRule(.around)

    private static func cursorRule(_ field: InputField) -> IntegerRule {
        IntegerRule(field, 0...Int64.max, requirement: "must be a message id or position, an integer from 0 to \(Int64.max)")
    }

    /// The contract's rules for a page, in one place: the HTTP layer checks
    /// them before it asks, the store before it reads (for its other callers).
    public func check() throws(RuleViolation) {
        try Self.limitRule.check(Int64(limit))
        switch cursor {
        case .newest:
            break
        case .before(let id):
            try Self.beforeRule.check(id)
        case .after(let id):
            try Self.afterRule.check(id)
        case .between(let after, let before):
            try Self.afterRule.check(after)
            try Self.beforeRule.check(before)
        case .around(let id):
            try Self.aroundRule.check(id)
        case .aroundTime:
            break
        }
        if let window {
            guard case .after = cursor else {
                throw RuleViolation(.window, "is only allowed beside a lone after")
            }
            try Self.windowRule.check(Int64(window))
        }
    }
}
