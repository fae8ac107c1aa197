import HistoryStore

/// The inbox's shapes (docs/API.md, "Inbox"): a row, a page of rows, the
/// user feed, and a read marker's state.
///
/// A row is `{"conversation","role","last_message","last_read_id",
/// "first_unread_id","unread_count","unread_capped","activity"}`; in the
/// feed it starts with `"type":"updated"`, and a membership that ended is
/// `{"type":"removed","conversation_id","activity"}`.
extension JSONWriter {
    /// What one page writes, or how many of its rows fit the budget when
    /// not all of them do: the cursor after a shortened page is not the
    /// page's own, so the caller reads that many again (see `InboxRoutes`).
    enum InboxPageJSON: Equatable {
        case whole([UInt8])
        case onlyFirst(rows: Int)
    }

    /// `{"last_read_id","first_unread_id","unread_count","unread_capped"}`:
    /// the answer of a marker move.
    public static func readState(_ state: ReadState) -> [UInt8] {
        var buffer = JSONBuffer(capacity: readStateBound + 2)
        buffer.write(atMost: readStateBound + 2) { cursor in
            cursor.write(UInt8(ascii: "{"))
            writeReadState(state, to: &cursor)
            cursor.write(UInt8(ascii: "}"))
        }
        return buffer.finish()
    }

    /// `{"conversations":[...],"next_cursor","activity"}` within `budget`
    /// bytes, or the number of rows that fit when the page does not.
    static func inboxPage(_ page: InboxPage, budget: Int = .max) -> InboxPageJSON {
        let tailBound = 48 + ByteCursor.stringBound(page.nextCursor?.utf8.count ?? 0) + ByteCursor.integerBound
        var capacity = 32 + tailBound
        for row in page.rows { capacity += inboxRowBound(row) + 1 }
        var buffer = JSONBuffer(capacity: min(capacity, budget))
        buffer.write(atMost: 24) { $0.write(#"{"conversations":["#) }
        var elements = BudgetedElements(arrayStart: buffer.byteCount, limit: budget - tailBound)
        for row in page.rows {
            let kept = elements.appendUnlessFull(to: &buffer, atMost: inboxRowBound(row)) { cursor in
                writeInboxRow(row, asEvent: false, to: &cursor)
            }
            if !kept { return .onlyFirst(rows: elements.keptCount) }
        }
        buffer.write(atMost: tailBound) { cursor in
            cursor.write(#"],"next_cursor":"#)
            if let next = page.nextCursor { cursor.writeString(next) } else { cursor.write("null") }
            cursor.write(#","activity":"#)
            cursor.writeInteger(page.activity)
            cursor.write(UInt8(ascii: "}"))
        }
        return .whole(buffer.finish())
    }

    /// `{"events":[...],"has_more","activity"}` of at most `budget` bytes:
    /// like the conversation feed, the events that do not fit are left for
    /// the next call, `has_more` is true and `activity` is the last written
    /// event's, the `since` that continues exactly there.
    public static func inboxFeed(_ feed: InboxChangeFeed, budget: Int = .max) -> [UInt8] {
        eventFeed(feed.events, reset: feed.reset, hasMore: feed.hasMore, counterKey: #","activity":"#,
                  counter: feed.activity, budget: budget, counterOf: \.activity, bound: inboxEventBound,
                  write: writeInboxEvent)
    }

    // MARK: - Pieces

    /// Keys and punctuation of the read state 80, three integers, a boolean.
    static let readStateBound = 96 + 3 * ByteCursor.integerBound

    /// A row's keys and punctuation besides its read state 96 (the
    /// feed's `type` included), the role, the activity.
    static let inboxRowFixedBound = 128 + readStateBound + ByteCursor.integerBound

    static func inboxRowBound(_ row: InboxRow) -> Int {
        inboxRowFixedBound + conversationBound(row.conversation) + (row.lastMessage.map(messageBound) ?? 4)
    }

    /// One element of a user feed's `events`: a stream's `data`.
    public static func inboxEvent(_ event: InboxEvent) -> [UInt8] {
        var buffer = JSONBuffer(capacity: inboxEventBound(event))
        buffer.write(atMost: inboxEventBound(event)) { writeInboxEvent(event, to: &$0) }
        return buffer.finish()
    }

    static func writeInboxEvent(_ event: InboxEvent, to cursor: inout ByteCursor) {
        switch event {
        case .updated(let row):
            writeInboxRow(row, asEvent: true, to: &cursor)
        case .removed(let conversation, let activity):
            cursor.write(#"{"type":"removed","conversation_id":"#)
            cursor.writeString(conversation.rawValue)
            cursor.write(#","activity":"#)
            cursor.writeInteger(activity)
            cursor.write(UInt8(ascii: "}"))
        }
    }

    static func inboxEventBound(_ event: InboxEvent) -> Int {
        switch event {
        case .updated(let row): inboxRowBound(row)
        case .removed(let conversation, _):
            64 + ByteCursor.stringBound(conversation.rawValue.utf8.count) + ByteCursor.integerBound
        }
    }

    static func writeInboxRow(_ row: InboxRow, asEvent: Bool, to cursor: inout ByteCursor) {
        cursor.write(asEvent ? #"{"type":"updated","conversation":"# : #"{"conversation":"#)
        writeConversation(row.conversation, to: &cursor)
        cursor.write(#","role":"#)
        switch row.role {
        case .member: cursor.write(#""member""#)
        case .owner: cursor.write(#""owner""#)
        }
        cursor.write(#","last_message":"#)
        if let message = row.lastMessage { writeMessage(message, to: &cursor) } else { cursor.write("null") }
        cursor.write(UInt8(ascii: ","))
        writeReadState(row.read, to: &cursor)
        cursor.write(#","activity":"#)
        cursor.writeInteger(row.activity)
        cursor.write(UInt8(ascii: "}"))
    }

    /// The four read-state members, without braces.
    static func writeReadState(_ state: ReadState, to cursor: inout ByteCursor) {
        cursor.write(#""last_read_id":"#)
        cursor.writeOptionalInteger(state.lastReadID)
        cursor.write(#","first_unread_id":"#)
        cursor.writeOptionalInteger(state.firstUnreadID)
        cursor.write(#","unread_count":"#)
        cursor.writeInteger(Int64(state.unreadCount))
        cursor.write(#","unread_capped":"#)
        cursor.writeBool(state.unreadCapped)
    }
}
