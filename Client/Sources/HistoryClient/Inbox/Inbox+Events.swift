extension Inbox {
    /// Applies events of the inbox feed, all changes up to `activity` (the
    /// batch's `activity`; nil: the highest event activity).
    ///
    /// A row fresher than the copy held replaces it: in place
    /// (``InboxChange/updated(conversationID:at:)``) or at its new place
    /// (``InboxChange/moved(conversationID:from:to:)``, a new message). A
    /// conversation not held comes in when its place is within the loaded
    /// part of the list (a new membership, a conversation from further down
    /// that came alive); below it, it waits for scrolling. A removed
    /// membership removes the row. Past capacity the bottom rows are dropped.
    public mutating func apply(_ events: [HistoryInboxEvent], through activity: Int64? = nil) -> [InboxChange] {
        let highest = events.map(\.activity).max() ?? self.activity
        self.activity = Swift.max(self.activity, activity ?? highest, highest)
        return merge(events)
    }

    /// One event; see ``apply(_:through:)``.
    public mutating func apply(_ event: HistoryInboxEvent) -> [InboxChange] {
        apply([event])
    }

    /// Applies the answers to a ``pendingRefresh``: the same rules as live
    /// events, without moving ``activity`` (the live feed keeps its own
    /// position).
    public mutating func applyRefresh(_ events: [HistoryInboxEvent]) -> [InboxChange] {
        merge(events)
    }

    private mutating func merge(_ events: [HistoryInboxEvent]) -> [InboxChange] {
        var changes: [InboxChange] = []
        for event in events {
            switch event {
            case .updated(let row):
                merge(row, into: &changes)
            case .removed(let conversationID, let activity):
                remove(conversationID, at: activity, into: &changes)
            }
        }
        trimToCapacity(into: &changes)
        return changes
    }
}
