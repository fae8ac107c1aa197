/// The messages a chat screen renders, ascending, with the policy chat
/// screens need: start at the bottom, prepend older pages, bound memory,
/// shrink back to one page at the bottom, follow the live tail.
///
/// A value with pure operations: each takes the window and one input (a
/// page, events, an intent) and returns what changed. No networking happens
/// here; ``nextRequest(for:)`` says which page to fetch, and the caller (an
/// app's view model, ``ConversationFeed``, the load tool) fetches it and
/// hands it back to ``apply(_:for:)``.
///
/// The window always holds a contiguous slice of the conversation: every
/// message between its first and last row, in id order, each once. It is
/// *attached to the tail* when that slice ends at the newest message; only
/// then do new messages from the event feed append to it.
///
/// ```swift
/// var window = MessageWindow()
/// let request = window.nextRequest(for: .open)!          // newest 50
/// let page = try await client.page(of: "general", request.pageRequest)
/// let changes = window.apply(page, for: request)         // [.replaced]
/// ```
public struct MessageWindow: Hashable, Sendable {
    public let configuration: MessageWindowConfiguration

    /// Ascending by id, no duplicates, at most `configuration.capacity`.
    public internal(set) var messages: [HistoryMessage] = []
    /// False until the first page arrived.
    public internal(set) var isLoaded = false
    /// The server said messages exist below the first row (show a loading row at the top).
    public internal(set) var hasOlder = false
    /// The window holds the newest message: new messages append to it.
    public internal(set) var attachedToTail = false
    /// The highest message id seen in any page or event, loaded or not.
    public internal(set) var newestKnownID: Int64?
    /// The live feed's position: every event up to this version was handed
    /// to ``apply(_:through:)``. Pages read before it may carry stale rows.
    public internal(set) var eventVersion: Int64 = 0
    /// The newest version any applied page was read at. A page read before
    /// it (answers can arrive out of order) may carry rows older than ones
    /// the window already showed.
    public internal(set) var newestReadVersion: Int64 = 0
    /// The id of the last jump's target when the server said it does not
    /// exist (the window then anchored on the row where it would stand);
    /// nil after a jump that found its target. A screen shows "message not
    /// found" for it.
    public internal(set) var missingJumpTarget: Int64?
    /// Row ranges to re-read from the event feed; see ``WindowRefresh``.
    public internal(set) var pendingRefreshes: [WindowRefresh] = []

    public init(configuration: MessageWindowConfiguration = MessageWindowConfiguration()) {
        self.configuration = configuration
    }

    /// Messages exist above the last row (show a loading row at the bottom).
    public var hasNewer: Bool { isLoaded && !attachedToTail }

    public var oldestID: Int64? { messages.first?.id }
    public var newestID: Int64? { messages.last?.id }

    /// The row with this id, if loaded.
    public func message(withID id: Int64) -> HistoryMessage? {
        index(ofID: id).map { messages[$0] }
    }

    // MARK: - Planning

    /// The page to fetch for `intent`, or nil when nothing is to be fetched:
    /// no older messages, already at the tail, or (for `.reachedBottom` while
    /// attached) a decision the window makes locally with ``settleAtBottom()``.
    public func nextRequest(for intent: WindowIntent) -> WindowRequest? {
        let limit = configuration.pageSize
        guard isLoaded else {
            switch intent {
            case .jump(let id), .openAtFirstUnread(let id?):
                return WindowRequest(cursor: .around(id), limit: limit)
            case .jumpToDate(let time):
                return WindowRequest(cursor: .aroundTime(time), limit: limit)
            default:
                return WindowRequest(cursor: .newest, limit: limit)
            }
        }
        switch intent {
        case .open, .openAtFirstUnread(nil):
            return WindowRequest(cursor: .newest, limit: limit)
        case .openAtFirstUnread(let id?):
            // Opening again starts again there, even if the row is loaded.
            return WindowRequest(cursor: .around(id), limit: limit)
        case .scrollUp:
            guard hasOlder, let oldestID else { return nil }
            return WindowRequest(cursor: .before(oldestID), limit: limit)
        case .scrollDown:
            guard !attachedToTail, let newestID else { return nil }
            return WindowRequest(cursor: .after(newestID), limit: limit, window: configuration.serverResetWindow)
        case .reachedBottom:
            // Attached: the newest page is already here, keep it locally.
            // Detached: one newest-page request instead of walking down page by page.
            return attachedToTail ? nil : WindowRequest(cursor: .newest, limit: limit)
        case .jump(let id):
            // A loaded target needs no request: the screen scrolls to it.
            return index(ofID: id) == nil ? WindowRequest(cursor: .around(id), limit: limit) : nil
        case .jumpToDate(let time):
            // Which row is first at that time is the server's to say (its
            // order of creation times): always a request.
            return WindowRequest(cursor: .aroundTime(time), limit: limit)
        }
    }

    /// The user is at the bottom: when the window is attached and grew past
    /// one page, drop all but the newest page, so scrolling far back and
    /// returning leaves one page in memory. Detached, use
    /// `nextRequest(for: .reachedBottom)` instead.
    public mutating func settleAtBottom() -> [WindowChange] {
        guard attachedToTail, messages.count > configuration.pageSize else { return [] }
        let count = messages.count - configuration.pageSize
        messages.removeFirst(count)
        hasOlder = true
        return [.trimmed(edge: .oldest, count: count)]
    }

    /// Hands out the refreshes to perform and forgets them.
    public mutating func takePendingRefreshes() -> [WindowRefresh] {
        defer { pendingRefreshes.removeAll() }
        return pendingRefreshes
    }

    // MARK: - Internals shared by the operations

    /// Binary search: ids are ascending.
    func index(ofID id: Int64) -> Int? {
        let position = insertionIndex(forID: id)
        return position < messages.count && messages[position].id == id ? position : nil
    }

    /// The first index whose id is >= `id`.
    func insertionIndex(forID id: Int64) -> Int {
        var low = 0
        var high = messages.count
        while low < high {
            let middle = (low + high) / 2
            if messages[middle].id < id { low = middle + 1 } else { high = middle }
        }
        return low
    }

    mutating func noteKnown(_ id: Int64?) {
        guard let id else { return }
        newestKnownID = Swift.max(newestKnownID ?? id, id)
    }

    /// Drops rows past capacity at `edge`; trimming the oldest makes older
    /// messages exist, trimming the newest detaches the window from the tail.
    mutating func trimToCapacity(at edge: WindowEdge) -> [WindowChange] {
        let excess = messages.count - configuration.capacity
        guard excess > 0 else { return [] }
        switch edge {
        case .oldest:
            messages.removeFirst(excess)
            hasOlder = true
        case .newest:
            messages.removeLast(excess)
            attachedToTail = false
        }
        return [.trimmed(edge: edge, count: excess)]
    }
}
