import HistoryClient

/// A MessageWindow driven against a SimulatedConversation the way
/// ConversationFeed drives it against the server, minus the network: every
/// request is answered by the model at once unless a test holds it back.
struct WindowHarness {
    var conversation = SimulatedConversation()
    var window: MessageWindow
    /// The live feed's position (it starts at the first page's version).
    var streamVersion: Int64?

    init(pageSize: Int = 5, capacity: Int? = nil, messages: Int = 0) {
        window = MessageWindow(configuration: MessageWindowConfiguration(pageSize: pageSize, capacity: capacity))
        for index in 0..<messages { conversation.post(body: "m\(index)") }
    }

    /// Asks the window what `intent` needs and answers it now; for
    /// `.reachedBottom` with no request, settles locally.
    @discardableResult
    mutating func perform(_ intent: WindowIntent) -> [WindowChange] {
        guard let request = window.nextRequest(for: intent) else {
            return intent == .reachedBottom ? window.settleAtBottom() : []
        }
        return deliver(conversation.page(request), for: request)
    }

    /// Applies a page (possibly answered earlier) and performs the refreshes it asks for.
    @discardableResult
    mutating func deliver(_ page: HistoryPage, for request: WindowRequest) -> [WindowChange] {
        if streamVersion == nil { streamVersion = page.version }
        return window.apply(page, for: request) + drainRefreshes()
    }

    @discardableResult
    mutating func drainRefreshes() -> [WindowChange] {
        var changes: [WindowChange] = []
        for refresh in window.takePendingRefreshes() {
            var since = refresh.since
            while true {
                let batch = conversation.events(since: since, limit: 3, minID: refresh.minID, maxID: refresh.maxID)
                changes += window.applyRefresh(batch.events)
                since = batch.version
                if !batch.hasMore { break }
            }
        }
        return changes
    }

    /// Delivers everything the live feed has, as one coalesced batch.
    @discardableResult
    mutating func deliverEvents(limit: Int = 100) -> [WindowChange] {
        let since = streamVersion ?? 0
        let batch = conversation.coalescedEvents(since: since, limit: limit)
        streamVersion = batch.version
        guard !batch.events.isEmpty else { return [] }
        return window.apply(batch.events, through: batch.version)
    }

    var ids: [Int64] { window.messages.map(\.id) }
}
