/// The numbers of ``Inbox``'s policy, each with its default.
public struct InboxConfiguration: Hashable, Sendable {
    /// Rows per page request. Default: 50, a few screens of a phone.
    public var pageSize: Int
    /// The most rows the inbox holds. Conversations that come alive move to
    /// the top and push the list down; rows pushed past this bound are
    /// dropped, and scrolling down fetches them again. At the bound the
    /// inbox asks for no further page. Default: 20 pages (1,000 rows, about
    /// a megabyte with their last messages).
    public var capacity: Int

    /// Values out of range are clamped (page size 1...200, capacity at least
    /// one page) rather than trapping: these numbers often come from remote
    /// configuration.
    public init(pageSize: Int = 50, capacity: Int? = nil) {
        let pageSize = min(max(pageSize, 1), 200)
        self.pageSize = pageSize
        self.capacity = max(capacity ?? pageSize * 20, pageSize)
    }
}
