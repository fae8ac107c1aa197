/// A page of messages, ascending by id (top to bottom on screen).
public struct Page: Hashable, Sendable {
    /// The messages as read: what the JSON writer encodes without building
    /// a `Message` per row (see `MessageRows`).
    public var rows: MessageRows
    /// The messages as values, built from `rows` on each call.
    public var messages: [Message] { rows.messages }
    /// Exact, never guessed from a full page: whether messages exist beyond
    /// the page's edges within the range asked for.
    public var hasOlder: Bool
    public var hasNewer: Bool
    /// The conversation's version at read time, the `since` for `events`.
    public var version: Int64
    /// Set for `.around` pages only.
    public var anchor: Anchor?
    /// Set only when the query had a `window`: true when the store answered
    /// the newest page instead of the `after` page.
    public var reset: Bool?

    public init(rows: MessageRows, hasOlder: Bool, hasNewer: Bool, version: Int64,
                anchor: Anchor? = nil, reset: Bool? = nil) {
        self.rows = rows
        self.hasOlder = hasOlder
        self.hasNewer = hasNewer
        self.version = version
        self.anchor = anchor
        self.reset = reset
    }

    /// The cursor for the next `before` page; nil when the page is empty.
    public var oldestID: Int64? { rows.records.first?.id }
    /// The cursor for the next `after` page; nil when the page is empty.
    public var newestID: Int64? { rows.records.last?.id }

    /// The message an `around` page was asked for, and where it is.
    public struct Anchor: Hashable, Sendable {
        /// nil for a jump by time that found no message at or after it.
        public var id: Int64?
        public var found: Bool
        /// The anchor's position in `messages`, nil when not found.
        public var index: Int?

        public init(id: Int64?, found: Bool, index: Int?) {
            self.id = id
            self.found = found
            self.index = index
        }
    }
}
