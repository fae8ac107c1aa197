/// A page of messages, ascending by id (top to bottom on screen).
public struct HistoryPage: Codable, Hashable, Sendable {
    public var messages: [HistoryMessage]
    /// Exact, never guessed from a full page: whether messages exist below
    /// the page's first message (within the range asked for).
    public var hasOlder: Bool
    /// Whether messages exist above the page's last one. False on an
    /// unbounded page means the page reaches the bottom of the chat.
    public var hasNewer: Bool
    /// The cursor for the next `before` page; nil when the page is empty.
    public var oldestID: Int64?
    /// The cursor for the next `after` page; nil when the page is empty.
    public var newestID: Int64?
    /// The conversation's version when the page was read: the `since` of
    /// events that may have changed these rows afterwards.
    public var version: Int64
    /// Only on `around` and `around_time` pages: where the asked-for message is.
    public var anchor: Anchor?
    /// Only when the request carried `window`: true when the server answered
    /// the newest page instead of the `after` page, and the client should
    /// replace what it renders with it.
    public var reset: Bool?

    public init(messages: [HistoryMessage], hasOlder: Bool, hasNewer: Bool, version: Int64,
                anchor: Anchor? = nil, reset: Bool? = nil) {
        self.messages = messages
        self.hasOlder = hasOlder
        self.hasNewer = hasNewer
        self.oldestID = messages.first?.id
        self.newestID = messages.last?.id
        self.version = version
        self.anchor = anchor
        self.reset = reset
    }

    /// The message an `around` page was asked for, and its position.
    public struct Anchor: Codable, Hashable, Sendable {
        /// The asked-for id (`around`), or the first message created at or
        /// after the asked-for time (`around_time`); nil when a time jump
        /// found no such message (the page is then the newest one).
        public var id: Int64?
        public var found: Bool
        /// The anchor's index in ``HistoryPage/messages``; nil when not found.
        public var index: Int?

        public init(id: Int64?, found: Bool, index: Int?) {
            self.id = id
            self.found = found
            self.index = index
        }
    }

    enum CodingKeys: String, CodingKey {
        case messages
        case hasOlder = "has_older"
        case hasNewer = "has_newer"
        case oldestID = "oldest_id"
        case newestID = "newest_id"
        case version
        case anchor
        case reset
    }
}
