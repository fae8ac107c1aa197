/// The checks of inbox rows (docs/API.md, "Inbox"): each row on its own,
/// the rows of one walk over the pages together, and each row against what
/// the user itself knows of its read markers.
enum InboxChecks {
    /// A row agrees with itself; returns false when it does not (logged).
    @discardableResult
    static func checkRow(_ row: InboxSummary.Row, context: @autoclosure () -> String, log: InvariantLog) -> Bool {
        guard !row.removed else { return true }
        var problem: String?
        if row.role == nil {
            problem = "no role"
        } else if row.lastMessageID != row.newestID {
            problem = "last_message \(text(row.lastMessageID)) but the conversation's newest_id is \(text(row.newestID))"
        } else if !(0...999).contains(row.unreadCount) || (row.unreadCapped && row.unreadCount != 999) {
            problem = "unread_count \(row.unreadCount) with unread_capped \(row.unreadCapped)"
        } else if (row.firstUnreadID == nil) != (row.unreadCount == 0) {
            problem = "first_unread_id \(text(row.firstUnreadID)) with unread_count \(row.unreadCount)"
        } else if let first = row.firstUnreadID, first <= row.lastReadID ?? 0 || first > row.newestID ?? 0 {
            problem = "first_unread_id \(first) not above last_read_id \(text(row.lastReadID)) and at most newest_id \(text(row.newestID))"
        } else if let marker = row.lastReadID, marker > row.newestID ?? 0 {
            problem = "last_read_id \(marker) above newest_id \(text(row.newestID))"
        }
        guard let problem else { return true }
        log.violation(.inboxRowConsistent, "\(context()) \(row.conversationID): \(problem)")
        return false
    }

    static func text(_ value: Int64?) -> String { value.map(String.init) ?? "null" }
}

/// One walk over a user's inbox pages, first page to `next_cursor` null:
/// the order key descends across every row of the walk, and no
/// conversation comes twice (a conversation that moves to the top while
/// the walk goes on is not repeated further down).
struct InboxWalk {
    private var seen = Set<String>()
    private var last: (messageID: Int64?, conversationID: String)?
    private(set) var rows = 0

    mutating func start() {
        seen.removeAll(keepingCapacity: true)
        last = nil
        rows = 0
    }

    mutating func check(_ page: InboxSummary, context: @autoclosure () -> String, log: InvariantLog) {
        for row in page.rows {
            rows += 1
            if !seen.insert(row.conversationID).inserted {
                log.violation(.inboxNoRepeat, "\(context()): \(row.conversationID) again, after \(rows - 1) rows")
            }
            if let last {
                let ordered: Bool = switch (last.messageID, row.lastMessageID) {
                case let (previous?, current?): current < previous
                case (_?, nil): true
                case (nil, _?): false
                case (nil, nil): last.conversationID.utf8.lexicographicallyPrecedes(row.conversationID.utf8)
                }
                if !ordered {
                    log.violation(.inboxOrder, "\(context()): \(row.conversationID) (last message \(InboxChecks.text(row.lastMessageID))) "
                                  + "after \(last.conversationID) (last message \(InboxChecks.text(last.messageID)))")
                }
            }
            last = (row.lastMessageID, row.conversationID)
        }
    }
}

/// What one virtual user knows of its read markers: the highest marker it
/// saw per conversation. Markers only move forward, so this is a lower
/// bound whoever else (another device of the same user) moves them.
struct ReadMarkerModel {
    private var markers: [String: Int64] = [:]

    func marker(of conversation: String) -> Int64? { markers[conversation] }

    /// Checks a marker the server reports, then learns it.
    mutating func observe(_ conversation: String, lastReadID: Int64?, context: @autoclosure () -> String, log: InvariantLog) {
        guard let known = markers[conversation] else {
            if let lastReadID { markers[conversation] = lastReadID }
            return
        }
        guard let lastReadID, lastReadID >= known else {
            log.violation(.markerForward, "\(context()) \(conversation): last_read_id \(InboxChecks.text(lastReadID)), "
                          + "but it was \(known) before")
            return
        }
        markers[conversation] = lastReadID
    }

    /// The exact check: when the conversation's newest message is still the
    /// one the user moved its marker to, nothing can be unread (nobody
    /// posted since, and the load deletes nothing), whatever the rest of the
    /// load did. Returns whether the row was compared.
    func checkUnread(_ row: InboxSummary.Row, context: @autoclosure () -> String, log: InvariantLog) -> Bool {
        guard !row.removed, let known = markers[row.conversationID], let newest = row.lastMessageID, newest == known else { return false }
        if row.lastReadID != known || row.unreadCount != 0 || row.firstUnreadID != nil || row.unreadCapped {
            log.violation(.unreadExact, "\(context()) \(row.conversationID): marker at the newest message \(known), "
                          + "yet last_read_id \(InboxChecks.text(row.lastReadID)), unread_count \(row.unreadCount), "
                          + "first_unread_id \(InboxChecks.text(row.firstUnreadID))")
        }
        return true
    }
}
