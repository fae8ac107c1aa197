/// What the user did that may need rows the inbox does not hold.
public enum InboxIntent: Hashable, Sendable {
    /// The inbox screen opens: load the top of the list.
    case open
    /// The bottom of the loaded rows came into view (the loading row appeared).
    case scrollDown
}

/// The one inbox page the ``Inbox`` needs next: the caller performs it with
/// ``ChatHistoryClient/inbox(of:cursor:limit:)`` and hands the page back to
/// ``Inbox/apply(_:for:)`` with this value, which is how the inbox
/// recognises an answer that arrived too late to fit.
public struct InboxRequest: Hashable, Sendable {
    /// A cursor the server gave; nil: the top of the list.
    public var cursor: String?
    public var limit: Int

    public init(cursor: String?, limit: Int) {
        self.cursor = cursor
        self.limit = limit
    }
}
