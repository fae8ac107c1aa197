/// One of a user's conversations that changed after a user feed's `since`:
/// its latest change, or the end of the membership.
package struct InboxConversationChange {
    package var seq: Int64
    package var activity: Int64
    /// Set for a membership that ended.
    package var removedID: ConversationID?

    package init(seq: Int64, activity: Int64, removedID: ConversationID? = nil) {
        self.seq = seq
        self.activity = activity
        self.removedID = removedID
    }
}

/// The user feed's answer (docs/API.md, "Inbox"), written once for both
/// backends: the changes in ascending `activity`, at most `limit`, each
/// still-standing membership as its current row, and the `activity` the
/// next call starts after.
package enum InboxFeedPage {
    /// `changed` holds one change per conversation, unordered; `rows` reads
    /// the current inbox rows of the seqs it is given (in the same snapshot).
    /// More than `resetAfter` changed conversations: the reset answer, no row read.
    package static func make(_ changed: [InboxConversationChange], limit: Int, current: Int64, resetAfter: Int? = nil,
                             rows: ([Int64]) throws(StoreError) -> [Int64: InboxRow]) throws(StoreError) -> InboxChangeFeed {
        if let resetAfter, changed.count > resetAfter {
            return InboxChangeFeed(events: [], hasMore: false, activity: current, reset: true)
        }
        var ordered = changed.sorted { $0.activity < $1.activity }
        let hasMore = ordered.count > limit
        if hasMore { ordered.removeLast(ordered.count - limit) }
        let found = try rows(ordered.filter { $0.removedID == nil }.map(\.seq))
        var events: [InboxEvent] = []
        events.reserveCapacity(ordered.count)
        for change in ordered {
            if let removedID = change.removedID {
                events.append(.removed(conversationID: removedID, activity: change.activity))
            } else if let row = found[change.seq] {
                events.append(.updated(row))
            }
        }
        let activity = hasMore ? ordered[ordered.count - 1].activity : current
        return InboxChangeFeed(events: events, hasMore: hasMore, activity: activity)
    }
}
