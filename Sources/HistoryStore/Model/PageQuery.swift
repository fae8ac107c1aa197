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

    public init(cursor: PageCursor = .newest, limit: Int = PageQuery.defaultLimit, window: Int? = nil) {
        self.cursor = cursor
        self.limit = limit
        self.window = window
    }
}
