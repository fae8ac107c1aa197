import Foundation

/// What the user did that may need messages the window does not hold.
public enum WindowIntent: Hashable, Sendable {
    /// The screen opens: load the bottom of the chat.
    case open
    /// The screen opens from the inbox at the first unread message (the
    /// row's ``HistoryReadState/firstUnreadID``): the page around it, which
    /// the window applies as ``WindowChange/jumped(anchorID:)`` so the screen
    /// scrolls there and draws its "new messages" divider above the anchor.
    /// Nil (nothing unread) opens at the bottom, as ``open``.
    case openAtFirstUnread(Int64?)
    /// The top of the loaded messages came into view (the loading row at the top appeared).
    case scrollUp
    /// The bottom of the loaded messages came into view while the window is
    /// detached from the live tail (the loading row at the bottom appeared).
    case scrollDown
    /// The user is at the bottom of the chat, or tapped "jump to latest".
    case reachedBottom
    /// The user tapped a reply: show the message it answers.
    case jump(to: Int64)
    /// The user picked a date: show the first message created at or after
    /// it, from the page around it (``PageCursor/aroundTime(_:)``), which the
    /// window applies as ``WindowChange/jumped(anchorID:)`` like a jump to a
    /// reply; a date after the newest message opens at the bottom
    /// (``WindowChange/replaced``).
    case jumpToDate(Date)
}

/// The one page request the window needs next: the caller performs it and
/// hands the page back to ``MessageWindow/apply(_:for:)`` with this value,
/// which is how the window recognises an answer that arrived too late to fit.
public struct WindowRequest: Hashable, Sendable {
    public var cursor: PageCursor
    public var limit: Int
    /// Only beside `.after`: the server-side trimming window.
    public var window: Int?

    public init(cursor: PageCursor, limit: Int, window: Int? = nil) {
        self.cursor = cursor
        self.limit = limit
        self.window = window
    }

    /// The same request for ``ChatHistoryClient/page(of:_:)``.
    public var pageRequest: PageRequest {
        PageRequest(cursor: cursor, limit: limit, window: window)
    }
}

/// Rows a page brought in that may be older than changes the live event
/// feed already delivered: ask `events?since=&min_id=&max_id=` for exactly
/// these rows and hand the answers to ``MessageWindow/applyRefresh(_:)``.
///
/// Needed because a page is read at one version while events keep
/// arriving: an edit that the feed delivered while the page was in flight
/// was ignored (its row was not loaded yet), and the page carries the row as
/// it was before the edit.
public struct WindowRefresh: Hashable, Sendable {
    public var since: Int64
    public var minID: Int64
    public var maxID: Int64

    public init(since: Int64, minID: Int64, maxID: Int64) {
        self.since = since
        self.minID = minID
        self.maxID = maxID
    }

    /// The events query for this refresh (call again while `has_more`).
    public func query(limit: Int? = nil) -> EventQuery {
        EventQuery(since: since, limit: limit, minID: minID, maxID: maxID)
    }
}
