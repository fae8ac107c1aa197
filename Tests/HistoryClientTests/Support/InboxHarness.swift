import HistoryClient

/// An Inbox driven against a SimulatedInbox the way an app drives it against
/// the server, minus the network: every request is answered by the model at
/// once unless a test holds it back, and each applied operation's changes
/// are replayed on a plain array of ids, which must end equal to the rows.
struct InboxHarness {
    var model = SimulatedInbox()
    var inbox: Inbox
    /// The live feed's position (it starts at the first page's activity).
    var feedActivity: Int64?
    /// What a list view would hold, following the changes alone.
    private(set) var listIDs: [String] = []
    /// Set when replaying the changes did not give the rows.
    private(set) var changeMismatch: String?
    /// How often the rare paths ran, so a property test can show it reached them.
    private(set) var statistics = Statistics()

    struct Statistics {
        /// Pages read before the feed's position, re-read from the feed.
        var refreshes = 0
        /// Rows dropped past capacity while still the user's.
        var trimmedRows = 0
        /// Pages asked from the top of a loaded inbox: every kept cursor lay past the bound.
        var pagesFromTheTopAgain = 0
    }

    init(pageSize: Int = 3, capacity: Int? = nil) {
        inbox = Inbox(configuration: InboxConfiguration(pageSize: pageSize, capacity: capacity))
    }

    var ids: [String] { inbox.rows.map(\.conversation.id) }

    /// Asks the inbox what `intent` needs and answers it now.
    @discardableResult
    mutating func perform(_ intent: InboxIntent) -> [InboxChange] {
        guard let request = inbox.nextRequest(for: intent) else { return [] }
        return deliver(model.page(cursor: request.cursor, limit: request.limit), for: request)
    }

    /// Applies a page (possibly answered earlier) and performs the refresh it asks for.
    @discardableResult
    mutating func deliver(_ page: HistoryInboxPage, for request: InboxRequest) -> [InboxChange] {
        let before = inbox
        if before.isLoaded, request.cursor == nil { statistics.pagesFromTheTopAgain += 1 }
        var changes = inbox.apply(page, for: request)
        if feedActivity == nil, inbox.isLoaded { feedActivity = inbox.activity }
        follow(changes, from: before)
        changes += drainRefresh()
        return changes
    }

    @discardableResult
    mutating func drainRefresh() -> [InboxChange] {
        guard var since = inbox.takePendingRefresh() else { return [] }
        statistics.refreshes += 1
        var changes: [InboxChange] = []
        while true {
            let batch = model.events(since: since, limit: 2)
            let before = inbox
            let step = inbox.applyRefresh(batch.events)
            follow(step, from: before)
            changes += step
            since = batch.activity
            if !batch.hasMore { return changes }
        }
    }

    /// Applies a feed answer.
    @discardableResult
    mutating func apply(_ batch: HistoryInboxEventBatch) -> [InboxChange] {
        let before = inbox
        let changes = inbox.apply(batch.events, through: batch.activity)
        follow(changes, from: before)
        return changes
    }

    /// Everything the live feed has, as one coalesced batch.
    @discardableResult
    mutating func deliverEvents(limit: Int = 100) -> [InboxChange] {
        let batch = nextFeedAnswer(limit: limit)
        return apply(batch)
    }

    /// The feed's next answer, moving its position (the caller applies it, now or later).
    mutating func nextFeedAnswer(limit: Int) -> HistoryInboxEventBatch {
        let batch = model.coalescedEvents(since: feedActivity ?? inbox.activity, limit: limit)
        feedActivity = batch.activity
        return batch
    }

    /// Replays `changes` on the list's ids and checks they give the rows, and
    /// that every row whose content changed was named.
    private mutating func follow(_ changes: [InboxChange], from before: Inbox) {
        for change in changes {
            change.apply(to: &listIDs)
            if case .removed(let id, _) = change, model.row(id) != nil { statistics.trimmedRows += 1 }
        }
        if listIDs != ids, changeMismatch == nil {
            changeMismatch = "changes \(changes) gave \(listIDs), rows are \(ids)"
        }
        listIDs = ids
        let named = Set(changes.map(\.conversationID))
        for row in inbox.rows where before.row(for: row.conversation.id) != row && !named.contains(row.conversation.id) {
            if changeMismatch == nil { changeMismatch = "row \(row.conversation.id) changed unnamed by \(changes)" }
        }
    }
}
