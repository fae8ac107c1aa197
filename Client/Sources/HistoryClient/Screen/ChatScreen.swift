/// Everything a chat screen shows and where it scrolls, as a value: a
/// ``MessageWindow`` plus the outbox, the unread divider, the typing row,
/// the "N new" count and the read position, and for every change one
/// ``ChatScrollCommand``.
///
/// Pure, like the window under it: inputs are pages, feed answers, sends
/// and their outcomes, and the ``ChatViewport`` the view reports; no
/// networking happens here. ``ChatScreenModel`` carries it out over a
/// ``ChatHistoryClient``; tests drive it directly (a viewport simulator
/// proves its rules over random sequences).
///
/// The rules (docs: CLIENTS.md, patterns 1-17):
/// - open at the bottom; a short chat sits at the top (the command is
///   "scroll to bottom", which a top-aligned layout clamps to zero);
/// - a prepend, a trim, an edit or an insertion keeps the row being read
///   (the first visible row that survives) at the same place on screen;
/// - new messages are followed only when the last report said the reader is
///   within ``followDistance`` of the bottom of an attached window; otherwise
///   they are counted in ``newMessageCount`` for a "jump to latest" button;
/// - a jump shows its target (a reply's original, the first unread) at
///   ``jumpTop``; jumping to the latest replaces the rows with the newest page;
/// - back at the bottom of an attached window, the rows shrink to one page.
public struct ChatScreen: Sendable {
    /// The rows' source of truth.
    public private(set) var window: MessageWindow
    /// Sends not yet stored, oldest first.
    public private(set) var outbox: [PendingMessage] = []
    /// Everyone else typing now (the server's `typing` list without ``me``),
    /// shown below the last message.
    public private(set) var typingUsers: [String] = []
    /// The message the "new messages" divider stands above; set when the
    /// screen opened at the first unread message.
    public private(set) var firstUnreadID: Int64?
    /// Messages of others that arrived while the reader was away from the
    /// bottom (or the window did not hold the tail): the "N new" badge.
    public private(set) var newMessageCount = 0
    /// The last command; its serial grows with each new one.
    public private(set) var scroll = ChatScrollCommand()
    /// The last viewport the view reported.
    public private(set) var viewport: ChatViewport?
    /// The highest message id that has been on screen.
    public private(set) var seenUpTo: Int64?
    /// The server's read marker as last known (moved forward only).
    public private(set) var readUpTo: Int64?
    /// Page requests in flight (never the same twice).
    public private(set) var inFlight: Set<WindowRequest> = []
    /// The requests in flight that the reader did not ask for (the feed
    /// reopening after a long gap): their answers keep the row being read.
    private var backgroundRequests: Set<WindowRequest> = []
    /// The last failure to show, nil after the next success.
    public private(set) var lastError: String?
    /// The rows to draw, top to bottom.
    public private(set) var rows: [ChatRow] = []
    /// Whether the screen follows the bottom: true after the reader was last
    /// seen within ``followDistance`` of it (or was sent there), false once a
    /// report says otherwise.
    public private(set) var followsBottom = true

    /// This user's sender id: own messages are never counted as new.
    public var me: String?
    /// Points from the bottom within which new messages are followed. Default: 80.
    public var followDistance: Double = 80
    /// Where a jump's target is put, in points from the top. Default: 0.
    public var jumpTop: Double = 0

    public init(configuration: MessageWindowConfiguration = MessageWindowConfiguration(), me: String? = nil) {
        self.window = MessageWindow(configuration: configuration)
        self.me = me
    }

    /// An older page is on its way (the top loader's spinner).
    public var isLoadingOlder: Bool { inFlight.contains { if case .before = $0.cursor { true } else { false } } }
    /// A newer page is on its way (the bottom loader's spinner).
    public var isLoadingNewer: Bool { inFlight.contains { if case .after = $0.cursor { true } else { false } } }
    /// A page that replaces the rows (opening, a jump) is in flight.
    public var isOpening: Bool {
        inFlight.contains {
            switch $0.cursor {
            case .newest, .around, .aroundTime: true
            default: false
            }
        }
    }
    /// The read marker should move to this id (the model debounces it): the
    /// newest message seen, when it is past the known marker.
    public var readMarkerToSend: Int64? {
        guard let seen = seenUpTo, seen > (readUpTo ?? .min) else { return nil }
        return seen
    }

    // MARK: - What the user does

    /// The page to fetch for `intent`, registered as in flight; nil when
    /// none is needed (then the screen already did what it could locally:
    /// settling at the bottom, scrolling to a loaded jump target).
    public mutating func request(for intent: WindowIntent) -> WindowRequest? {
        switch intent {
        case .openAtFirstUnread(let id):
            firstUnreadID = id
        case .jump(let id):
            if window.message(withID: id) != nil {
                command(.keep(.message(id), top: jumpTop))
                return nil
            }
        case .reachedBottom:
            if window.attachedToTail {
                followsBottom = true
                newMessageCount = 0
                let before = rows
                let changes = window.settleAtBottom()
                rebuild(after: changes, before: before, cause: .reader)
                command(.scrollToBottom)
                return nil
            }
        default:
            break
        }
        guard let request = window.nextRequest(for: intent), inFlight.insert(request).inserted else { return nil }
        return request
    }

    /// "Jump to latest": the newest page at the bottom (the rows are
    /// replaced when the window does not hold the tail).
    public mutating func jumpToLatest() -> WindowRequest? {
        request(for: .reachedBottom)
    }

    /// Adds a pending row for a new message and scrolls to it; the model
    /// sends it. While the window does not hold the tail, the returned
    /// request loads the newest page first.
    public mutating func send(_ pending: PendingMessage) -> WindowRequest? {
        let before = rows
        outbox.append(pending)
        followsBottom = true
        rebuild(after: [], before: before, cause: .reader)
        command(.scrollToBottom)
        return window.attachedToTail ? nil : request(for: .reachedBottom)
    }

    /// The outbox entry for `clientID` is about to be sent (again): count
    /// the attempt and show it as sending.
    public mutating func sendWillStart(clientID: String) {
        guard let index = outbox.firstIndex(where: { $0.clientID == clientID }) else { return }
        outbox[index].attempts += 1
        if outbox[index].state != .sending {
            let before = rows
            outbox[index].state = .sending
            rebuild(after: [], before: before, cause: .background)
        }
    }

    /// The send failed for good (or was given up): the row shows failed with a retry.
    public mutating func sendDidFail(clientID: String, reason: String) {
        guard let index = outbox.firstIndex(where: { $0.clientID == clientID }) else { return }
        let before = rows
        outbox[index].state = .failed(reason: reason)
        rebuild(after: [], before: before, cause: .background)
    }

    /// The server stored the message: it replaces the pending row in place
    /// (inserted into the window when the window holds the tail).
    public mutating func sendDidSucceed(clientID: String, message: HistoryMessage) {
        let before = rows
        outbox.removeAll { $0.clientID == clientID }
        let event = HistoryEvent(version: message.version, kind: .created, message: message)
        let changes = window.applyRefresh([event])
        rebuild(after: changes, before: before, cause: .ownMessage)
    }

    /// Drops a failed send the user discarded.
    public mutating func discard(clientID: String) {
        let before = rows
        outbox.removeAll { $0.clientID == clientID }
        rebuild(after: [], before: before, cause: .background)
    }

    /// The view's report after a layout or a scroll. Returns the page
    /// request a loader row coming into view needs (registered in flight).
    public mutating func viewportDidChange(_ viewport: ChatViewport) -> WindowRequest? {
        self.viewport = viewport
        let ids = viewport.visibleRows.map(\.id)
        let nearBottom = viewport.distanceFromBottom <= followDistance
        followsBottom = nearBottom && window.attachedToTail
        for case .message(let id) in ids where id > (seenUpTo ?? .min) {
            seenUpTo = id
        }
        if followsBottom { newMessageCount = 0 }
        if ids.contains(.loadingOlder), let request = request(for: .scrollUp) { return request }
        if ids.contains(.loadingNewer), let request = request(for: .scrollDown) { return request }
        if followsBottom, inFlight.isEmpty, viewport.distanceFromBottom < 1,
           window.messages.count > window.configuration.pageSize {
            // Back at the very bottom of an attached window: shrink to one page.
            let before = rows
            let changes = window.settleAtBottom()
            rebuild(after: changes, before: before, cause: .background)
        }
        return nil
    }

    /// Shows who is typing (``me`` left out); scrolled into view only when
    /// following the bottom.
    public mutating func typingDidChange(_ users: [String]) {
        let others = users.filter { $0 != me }
        guard others != typingUsers else { return }
        let before = rows
        typingUsers = others
        rebuild(after: [], before: before, cause: .background)
    }

    // MARK: - What the network answers

    /// Applies the answer to a request from ``request(for:)``.
    public mutating func receive(_ page: HistoryPage, for request: WindowRequest) {
        inFlight.remove(request)
        lastError = nil
        let before = rows
        let changes = window.apply(page, for: request)
        let cause: Cause
        switch request.cursor {
        case _ where backgroundRequests.remove(request) != nil: cause = .background
        case .newest: cause = .reader
        case .around(let id): cause = firstUnreadID == id ? .openedAtUnread : .reader
        case .aroundTime: cause = .reader
        default: cause = .background
        }
        rebuild(after: changes, before: before, cause: cause)
    }

    /// A request failed: it may be asked again; the error is shown.
    public mutating func requestDidFail(_ request: WindowRequest, reason: String) {
        inFlight.remove(request)
        backgroundRequests.remove(request)
        lastError = reason
    }

    /// A feed failure or another error to show.
    public mutating func report(_ reason: String?) {
        lastError = reason
    }

    /// Applies one answer of the live feed (one page of it; its typing list
    /// when it carries one). Returns the newest-page request to make
    /// instead when the answer shows a gap larger than the window holds (a
    /// full page with more waiting while the window holds the tail):
    /// reopening beats replaying.
    ///
    /// A reset answer (``HistoryEventBatch/reset``: the server would not
    /// replay that much) is never applied: the rows are stale beyond
    /// repair, wherever the reader is, and the newest page replaces them.
    /// It returns that request, or nil when one is in flight already; the
    /// feed goes on from that page's version.
    public mutating func receive(_ batch: HistoryEventBatch) -> WindowRequest? {
        if let typing = batch.typing { typingDidChange(typing) }
        if batch.reset {
            return reopen()
        }
        let capacity = window.configuration.capacity
        if batch.hasMore, batch.events.count >= capacity, window.attachedToTail || !window.isLoaded {
            return reopen()
        }
        let before = rows
        let newestBefore = window.newestID ?? .min
        let changes = window.apply(batch.events, through: batch.version)
        let stored = Set(batch.events.compactMap(\.message.clientID))
        if !stored.isEmpty { outbox.removeAll { stored.contains($0.clientID) } }
        let arrived = batch.events.filter { $0.kind == .created && $0.message.id > newestBefore && $0.message.sender != me }
        let follow = followsBottom && window.attachedToTail
        if !follow { newMessageCount += arrived.count }
        rebuild(after: changes, before: before, cause: .background)
        return nil
    }

    /// The newest page, asked for the network's sake (a reset, a long gap):
    /// registered in flight as a background request, so its answer keeps
    /// the row being read when it is still there. Nil when a newest page is
    /// in flight already.
    public mutating func reopen() -> WindowRequest? {
        let request = WindowRequest(cursor: .newest, limit: window.configuration.pageSize)
        guard inFlight.insert(request).inserted else { return nil }
        backgroundRequests.insert(request)
        return request
    }

    /// The live feed stopped (the app went to the background): who was
    /// typing is not known any more.
    public mutating func feedDidStop() {
        typingDidChange([])
    }

    /// Applies a ``WindowRefresh`` answer.
    public mutating func receiveRefresh(_ events: [HistoryEvent]) {
        let before = rows
        let changes = window.applyRefresh(events)
        rebuild(after: changes, before: before, cause: .background)
    }

    /// Hands out the window's pending refreshes.
    public mutating func takePendingRefreshes() -> [WindowRefresh] {
        window.takePendingRefreshes()
    }

    /// The server moved (or confirmed) the read marker.
    public mutating func readMarkerDidMove(to id: Int64) {
        readUpTo = Swift.max(readUpTo ?? id, id)
    }

    // MARK: - Rows and the one scroll per change

    /// Why rows changed, which decides the scroll.
    enum Cause {
        /// The reader asked (open, jump, jump to latest, send): go where asked.
        case reader
        /// The screen opened at the first unread message: the divider on top.
        case openedAtUnread
        /// The reader's own message was stored.
        case ownMessage
        /// The network changed rows: keep the row being read, or follow the bottom.
        case background
    }

    private mutating func command(_ action: ChatScrollCommand.Action) {
        scroll = ChatScrollCommand(serial: scroll.serial + 1, action: action)
    }

    private mutating func rebuild(after changes: [WindowChange], before: [ChatRow], cause: Cause) {
        if !outbox.isEmpty, !changes.isEmpty {
            // A stored copy arrived (a page, a refresh, the feed) before the
            // send's own answer: the pending row gives way to it.
            let stored = Set(window.messages.compactMap(\.clientID))
            outbox.removeAll { stored.contains($0.clientID) }
        }
        rows = Self.rows(of: window, outbox: outbox, typing: typingUsers, firstUnreadID: firstUnreadID)
        guard rows != before || !changes.isEmpty else { return }
        for change in changes {
            switch change {
            case .replaced:
                // The network replaced the rows (a long gap reopened at the
                // newest page): a row being read that is still there stays.
                let present = Set(rows.map(\.id))
                if cause == .background, !followsBottom,
                   let anchor = viewport?.visibleRows.first(where: { present.contains($0.id) }) {
                    command(.keep(anchor.id, top: anchor.top))
                    return
                }
                command(.scrollToBottom)
                followsBottom = true
                newMessageCount = 0
                return
            case .jumped(let anchorID):
                if cause == .openedAtUnread, firstUnreadID == anchorID {
                    command(.keep(.unreadDivider, top: jumpTop))
                } else {
                    command(.keep(.message(anchorID), top: jumpTop))
                }
                followsBottom = false
                return
            default:
                continue
            }
        }
        let bottomChanged = rows.last != before.last
        if window.attachedToTail, bottomChanged, followsBottom || cause == .reader {
            command(.scrollToBottom)
            return
        }
        // Keep the row being read: the first visible row that is still here.
        let present = Set(rows.map(\.id))
        if let anchor = viewport?.visibleRows.first(where: { present.contains($0.id) }) {
            command(.keep(anchor.id, top: anchor.top))
        } else if viewport == nil || followsBottom {
            command(.scrollToBottom)
        }
    }

    /// The rows of a state, top to bottom.
    static func rows(of window: MessageWindow, outbox: [PendingMessage], typing: [String],
                     firstUnreadID: Int64?) -> [ChatRow] {
        guard window.isLoaded else { return outbox.map(ChatRow.pending) }
        var rows: [ChatRow] = []
        rows.reserveCapacity(window.messages.count + outbox.count + 3)
        if window.hasOlder { rows.append(.loadingOlder) }
        for message in window.messages {
            if message.id == firstUnreadID { rows.append(.unreadDivider) }
            rows.append(.message(message))
        }
        if window.hasNewer {
            rows.append(.loadingNewer)
        } else {
            rows += outbox.map(ChatRow.pending)
            if !typing.isEmpty { rows.append(.typing(typing)) }
        }
        return rows
    }
}
