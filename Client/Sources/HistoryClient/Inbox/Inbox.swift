/// The conversations an inbox screen renders, most recent first, kept in
/// order by pages and the live inbox feed, with each change reported by
/// its nature so the list can animate a row moving to the top.
///
/// A value with pure operations, like ``MessageWindow``: no networking
/// happens here. ``nextRequest(for:)`` says which page to fetch, the caller
/// fetches it and hands it to ``apply(_:for:)``; the feed's answers go to
/// ``apply(_:through:)``.
///
/// The inbox always holds the *top* of the user's list: every conversation
/// placed above its last row, each once, in the server's order (last
/// message id descending, conversations without messages last by id). A
/// row changes only for a fresher copy (a higher ``HistoryInboxRow/activity``),
/// so pages and feed answers may arrive in any order. Memory is bounded:
/// past ``InboxConfiguration/capacity`` rows the bottom ones are dropped, and
/// scrolling down fetches them again from a cursor the inbox kept.
///
/// ```swift
/// var inbox = Inbox()
/// let request = inbox.nextRequest(for: .open)!              // the top 50
/// let page = try await client.inbox(cursor: request.cursor, limit: request.limit)
/// let changes = inbox.apply(page, for: request)             // [.inserted(...), ...]
/// for try await batch in client.inboxFeed(since: inbox.activity).batches {
///     let changes = inbox.apply(batch.events, through: batch.activity)   // [.moved(...)]
/// }
/// ```
public struct Inbox: Hashable, Sendable {
    public let configuration: InboxConfiguration

    /// In the server's order, each conversation once, at most
    /// `configuration.capacity`.
    public internal(set) var rows: [HistoryInboxRow] = []
    /// False until the first page arrived.
    public internal(set) var isLoaded = false
    /// The feed's position: every change up to this activity was handed to
    /// ``apply(_:through:)`` (the first page sets it to its own activity
    /// when the feed is behind). The `since` of the inbox feed.
    public internal(set) var activity: Int64 = 0
    /// The newest activity any applied page was read at.
    public internal(set) var newestReadActivity: Int64 = 0
    /// Set when a page was read before changes the inbox had already seen
    /// (pages and feed answers race): the `since` of the inbox events to
    /// re-read and hand to ``applyRefresh(_:)``. See ``takePendingRefresh()``.
    public internal(set) var pendingRefresh: Int64?

    /// How far down the list the rows are complete.
    var coverage: InboxCoverage = .none
    /// Cursors the server gave for places within ``coverage``, top to bottom.
    var boundaries: [InboxBoundary] = []

    public init(configuration: InboxConfiguration = InboxConfiguration()) {
        self.configuration = configuration
    }

    /// The server holds rows below the last one (show a loading row at the bottom).
    public var hasMore: Bool { isLoaded && coverage != .all }

    /// The inbox holds as many rows as it may: scrolling further asks for nothing.
    public var isAtCapacity: Bool { rows.count >= configuration.capacity }

    /// The row of this conversation, if loaded.
    public func row(for conversationID: String) -> HistoryInboxRow? {
        index(ofConversation: conversationID).map { rows[$0] }
    }

    /// Where this conversation's row is, if loaded.
    public func index(ofConversation conversationID: String) -> Int? {
        rows.firstIndex { $0.conversation.id == conversationID }
    }

    // MARK: - Planning

    /// The page to fetch for `intent`, or nil when nothing is to be fetched:
    /// opening an inbox already loaded (the feed keeps it current), the end
    /// of the list reached, or the capacity reached.
    public func nextRequest(for intent: InboxIntent) -> InboxRequest? {
        let limit = configuration.pageSize
        guard isLoaded else { return InboxRequest(cursor: nil, limit: limit) }
        switch intent {
        case .open:
            return nil
        case .scrollDown:
            guard hasMore, !isAtCapacity else { return nil }
            // The lowest cursor kept; none (rows above the first page's end
            // outgrew the capacity) means paging from the top again, merging
            // rows already held, until past the last one.
            return InboxRequest(cursor: boundaries.last?.cursor, limit: limit)
        }
    }

    /// Hands out the refresh to perform (the `since` of inbox events to
    /// read, following `has_more`, and give to ``applyRefresh(_:)``) and
    /// forgets it.
    public mutating func takePendingRefresh() -> Int64? {
        defer { pendingRefresh = nil }
        return pendingRefresh
    }

    // MARK: - Internals shared by the operations

    /// The first index whose row is placed at or below `place`.
    func insertionIndex(for place: InboxPlace) -> Int {
        var low = 0
        var high = rows.count
        while low < high {
            let middle = (low + high) / 2
            if InboxPlace(rows[middle]) < place { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Puts `row` in place if it is fresher than the copy held (or new and
    /// within the coverage), noting the change; a held row whose new place
    /// falls below the coverage leaves.
    mutating func merge(_ row: HistoryInboxRow, into changes: inout [InboxChange]) {
        let id = row.conversation.id
        let place = InboxPlace(row)
        if let index = index(ofConversation: id) {
            guard row.activity > rows[index].activity else { return }
            rows.remove(at: index)
            guard coverage.includes(place) else {
                changes.append(.removed(conversationID: id, from: index))
                return
            }
            let target = insertionIndex(for: place)
            rows.insert(row, at: target)
            changes.append(target == index ? .updated(conversationID: id, at: index)
                : .moved(conversationID: id, from: index, to: target))
        } else if coverage.includes(place) {
            let target = insertionIndex(for: place)
            rows.insert(row, at: target)
            changes.append(.inserted(conversationID: id, at: target))
        }
    }

    /// Removes the held row of `conversationID` if it is older than `activity`.
    mutating func remove(_ conversationID: String, at activity: Int64, into changes: inout [InboxChange]) {
        guard let index = index(ofConversation: conversationID), rows[index].activity < activity else { return }
        rows.remove(at: index)
        changes.append(.removed(conversationID: conversationID, from: index))
    }

    /// Drops the rows past capacity, bottom first; the list is then complete
    /// only down to the last row kept.
    mutating func trimToCapacity(into changes: inout [InboxChange]) {
        let capacity = configuration.capacity
        guard rows.count > capacity else { return }
        for index in stride(from: rows.count - 1, through: capacity, by: -1) {
            changes.append(.removed(conversationID: rows[index].conversation.id, from: index))
        }
        rows.removeLast(rows.count - capacity)
        coverage = .through(InboxPlace(rows[capacity - 1]))
        boundaries.removeAll { !coverage.includes($0.place) }
    }
}
