extension Inbox {
    /// The most cursors kept: enough to resume anywhere within the capacity
    /// (one per page), and bounded whatever the pages were.
    var boundaryLimit: Int { Swift.max(4, 2 * configuration.capacity / configuration.pageSize + 2) }

    /// Applies the answer to `request` (from ``nextRequest(for:)``).
    ///
    /// The page's rows are the user's conversations placed after the
    /// request's cursor and down to the page's last row, as they were when
    /// it was read: each goes in place unless the inbox holds a fresher copy,
    /// and the inbox is then complete down to the further of its old last
    /// row and the page's last (the whole list when `next_cursor` is null).
    /// A conversation that moved to the top while the user paged is not on
    /// the later page; the feed moves it.
    ///
    /// An answer whose cursor the inbox no longer keeps (rows below it were
    /// dropped while it was in flight) changes nothing. A page read before
    /// changes the inbox already saw leaves a ``pendingRefresh``.
    public mutating func apply(_ page: HistoryInboxPage, for request: InboxRequest) -> [InboxChange] {
        let start: InboxPlace?
        if let cursor = request.cursor {
            guard let boundary = boundaries.first(where: { $0.cursor == cursor }) else { return [] }
            start = boundary.place
        } else {
            start = nil
        }
        if page.activity < Swift.max(activity, newestReadActivity) {
            pendingRefresh = Swift.min(pendingRefresh ?? page.activity, page.activity)
        }
        if !isLoaded {
            isLoaded = true
            activity = Swift.max(activity, page.activity)
        }
        newestReadActivity = Swift.max(newestReadActivity, page.activity)

        let end: InboxCoverage
        if page.nextCursor == nil {
            end = .all
        } else if let last = page.conversations.last {
            end = .through(InboxPlace(last))
        } else {
            end = .none
        }
        coverage = coverage.extended(to: end)
        var changes: [InboxChange] = []
        for row in page.conversations {
            merge(row, into: &changes)
        }
        if let cursor = page.nextCursor, let last = page.conversations.last {
            note(InboxBoundary(place: InboxPlace(last), cursor: cursor), after: start)
        }
        trimToCapacity(into: &changes)
        return changes
    }

    /// The request that reloads the top of the list after the feed's reset.
    public var reopenRequest: InboxRequest {
        InboxRequest(cursor: nil, limit: configuration.pageSize)
    }

    /// Starts over from `page`, the answer to ``reopenRequest`` read after
    /// the feed answered a reset at `activity` (the server would not replay
    /// that much): every row held goes (``InboxChange/removed(conversationID:from:)``,
    /// bottom first), the page's rows come in, and the feed follows from
    /// the later of `activity` and the page's.
    public mutating func reopen(with page: HistoryInboxPage, after activity: Int64) -> [InboxChange] {
        var changes: [InboxChange] = []
        for index in rows.indices.reversed() {
            changes.append(.removed(conversationID: rows[index].conversation.id, from: index))
        }
        var fresh = Inbox(configuration: configuration)
        fresh.activity = activity
        changes += fresh.apply(page, for: reopenRequest)
        self = fresh
        return changes
    }

    /// Keeps a cursor, in order; one that does not lie below the page's own
    /// start would not move paging forward.
    private mutating func note(_ boundary: InboxBoundary, after start: InboxPlace?) {
        if let start, boundary.place <= start { return }
        guard coverage.includes(boundary.place) else { return }
        let index = boundaries.firstIndex { $0.place >= boundary.place } ?? boundaries.endIndex
        if index < boundaries.count, boundaries[index].place == boundary.place {
            boundaries[index] = boundary
        } else {
            boundaries.insert(boundary, at: index)
        }
        if boundaries.count > boundaryLimit {
            boundaries.removeFirst(boundaries.count - boundaryLimit)
        }
    }
}
