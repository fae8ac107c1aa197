import HTTPCore

/// `inbox`: a chat app's home screen. The user walks its inbox from the
/// first page along `next_cursor`, opens a conversation with something
/// unread at its first unread message (`around=first_unread_id`), reads
/// down to the bottom, and moves its read marker there; while the writers
/// post. Now and then it asks to move a marker back, which must change nothing.
///
/// Checks (beside every page's own): the rows of one walk come in
/// last-message order with no conversation twice; each row agrees with
/// itself; markers never move back; and unread counts equal the user's own
/// reading wherever it can know them exactly: the messages it read above the
/// marker when nothing was posted in between, and zero unread in a
/// conversation whose newest message is still the one it marked.
final class InboxUser: CallbackUser {
    private var identity: (id: String, path: String)?
    private var idBytes: [UInt8] = []
    private var inbox = InboxSummary()
    private var walk = InboxWalk()
    private var model = ReadMarkerModel()
    /// The rows of the current walk: where the user may open next.
    private var rows: [InboxSummary.Row] = []
    private var reading: Reading?
    private var cycles = 0
    private var steps = 0

    /// One conversation being read from its first unread message to the bottom.
    private struct Reading {
        var row: InboxSummary.Row
        var entry: ConversationCatalog.Entry
        var label: String
        /// Every id from here to `newest` was read (nil until the first page).
        var coveredFrom: Int64?
        var newest: Int64?
        var unread = 0
        var firstUnread: Int64?
        var pages = 0
    }

    /// Pages of one reading before the user gives up on reaching the bottom
    /// (at most 999 unread plus tombstones and its own messages: rarely more than 6 of 200).
    static let maximumReadingPages = 40

    func run(_ context: UserContext) {
        if identity == nil {
            let identity = context.settings.inboxUser(ofUser: context.index)
            self.identity = identity
            idBytes = Array(identity.id.utf8)
        }
        walk.start()
        rows.removeAll(keepingCapacity: true)
        fetchInbox(cursor: nil, page: 1, context)
    }

    private func fetchInbox(cursor: String?, page: Int, _ context: UserContext) {
        guard let identity else { return }
        var target = "/v1/users/\(identity.path)/conversations?limit=\(context.settings.pageSize)"
        if let cursor { target += "&cursor=" + Self.percentEncoded(cursor) }
        let label = "inbox \(identity.id) page \(page)"
        context.send(LoadRequest(target: target, kind: .inboxPage)) { [self] response in
            guard let response, response.status == 200 else { return finishCycle(context) }
            do {
                try inbox.scan(response.body)
            } catch {
                context.log.violation(.responseShape, "\(label) GET \(target): \(error)")
                return finishCycle(context)
            }
            context.counters.inboxPages += 1
            walk.check(inbox, context: label, log: context.log)
            for row in inbox.rows {
                InboxChecks.checkRow(row, context: label, log: context.log)
                model.observe(row.conversationID, lastReadID: row.lastReadID, context: label, log: context.log)
                if model.checkUnread(row, context: label, log: context.log) { context.counters.unreadCompared += 1 }
                rows.append(row)
            }
            if inbox.rows.count > context.settings.pageSize {
                context.log.violation(.responseShape, "\(label): \(inbox.rows.count) rows for limit \(context.settings.pageSize)")
            }
            if let next = inbox.nextCursor, page < context.settings.inboxPages {
                return fetchInbox(cursor: next, page: page + 1, context)
            }
            if inbox.nextCursor == nil { context.counters.inboxWalks += 1 }
            open(context)
        }
    }

    /// Opens a conversation with something unread (any, when none has).
    private func open(_ context: UserContext) {
        let readable = rows.filter { $0.lastMessageID != nil }
        guard !readable.isEmpty, let identity else { return finishCycle(context) }
        let unread = readable.filter { $0.unreadCount > 0 }
        let row = unread.isEmpty ? readable[Int.random(in: 0..<readable.count, using: &context.random)]
                                 : unread[Int.random(in: 0..<unread.count, using: &context.random)]
        let entry = ConversationCatalog.Entry(id: row.conversationID)
        reading = Reading(row: row, entry: entry, label: "inbox \(identity.id) reads \(row.conversationID)")
        // Past the cap a screen jumps to the bottom, as chat apps do.
        let cursor: LoadCursor = if let first = row.firstUnreadID, !row.unreadCapped { .around(first) } else { .newest }
        read(cursor, context)
    }

    private func read(_ cursor: LoadCursor, _ context: UserContext) {
        guard let current = reading else { return finishCycle(context) }
        context.fetchPage(current.entry, cursor, limit: context.settings.pageSize, label: current.label,
                          unreadOf: idBytes) { [self] coverage in
            // No coverage: the request failed (counted) or the page was empty (a row with a last message has some).
            guard coverage != nil, var reading else { return finishCycle(context) }
            let page = context.page
            if case .around(let anchor) = cursor, page.anchor?.found != true {
                context.log.violation(.unreadExact, "\(reading.label): first_unread_id \(anchor) names no message")
            }
            if reading.coveredFrom == nil {
                reading.coveredFrom = page.hasOlder ? (page.ids.first ?? 0) : 0
            }
            let marker = reading.row.lastReadID ?? 0
            for (id, counts) in zip(page.ids, page.countsAsUnread) where id > marker && counts {
                reading.unread += 1
                if reading.firstUnread == nil { reading.firstUnread = id }
            }
            reading.newest = page.ids.last ?? reading.newest
            reading.pages += 1
            self.reading = reading
            if page.hasNewer, reading.pages < Self.maximumReadingPages, let newest = reading.newest {
                return read(.after(newest), context)
            }
            if !page.hasNewer { compare(reading, context) }
            markRead(context)
        }
    }

    /// The reading against the row it opened from, when nothing was posted in
    /// between (the bottom it reached is the row's last message) and the
    /// pages read reach down to the first unread message the row names.
    private func compare(_ reading: Reading, _ context: UserContext) {
        let row = reading.row
        guard !row.unreadCapped, let newest = reading.newest, newest == row.lastMessageID,
              let coveredFrom = reading.coveredFrom, coveredFrom <= (row.firstUnreadID ?? (row.lastReadID ?? 0) + 1) else { return }
        context.counters.readingsCompared += 1
        if Int64(reading.unread) != row.unreadCount || reading.firstUnread != row.firstUnreadID {
            context.log.violation(.unreadExact, "\(reading.label): the row said unread_count \(row.unreadCount), first_unread_id "
                                  + "\(InboxChecks.text(row.firstUnreadID)) above last_read_id \(InboxChecks.text(row.lastReadID)); "
                                  + "the pages read up to \(newest) show \(reading.unread), first \(InboxChecks.text(reading.firstUnread))")
        }
    }

    /// Moves the marker to the newest message read; every eighth time also
    /// asks to move it back, which must leave it where it is.
    private func markRead(_ context: UserContext) {
        guard let reading, let newest = reading.newest, let identity else { return finishCycle(context) }
        let conversation = reading.row.conversationID
        let target = "/v1/conversations/\(conversation)/members/\(identity.path)/read"
        let body = Array(#"{"last_read_id":\#(newest)}"#.utf8)
        context.send(LoadRequest(method: .put, target: target, body: body, kind: .markRead)) { [self] response in
            guard let state = readState(response, target: target, context) else { return finishCycle(context) }
            context.counters.markersMoved += 1
            if (state.lastReadID ?? 0) < newest {
                context.log.violation(.markerForward, "\(reading.label): PUT last_read_id \(newest) answered \(InboxChecks.text(state.lastReadID))")
            }
            model.observe(conversation, lastReadID: state.lastReadID, context: reading.label, log: context.log)
            cycles += 1
            guard cycles % 8 == 0, let held = model.marker(of: conversation) else { return finishCycle(context) }
            let lower = max(0, held - 1 - Int64.random(in: 0..<50, using: &context.random))
            let back = Array(#"{"last_read_id":\#(lower)}"#.utf8)
            context.send(LoadRequest(method: .put, target: target, body: back, kind: .markRead)) { [self] again in
                if let state = readState(again, target: target, context) {
                    context.counters.markersHeld += 1
                    if (state.lastReadID ?? 0) < held {
                        context.log.violation(.markerForward, "\(reading.label): PUT last_read_id \(lower) below the marker \(held) "
                                              + "answered \(InboxChecks.text(state.lastReadID))")
                    }
                    model.observe(conversation, lastReadID: state.lastReadID, context: reading.label, log: context.log)
                }
                finishCycle(context)
            }
        }
    }

    /// The marker PUT's answer scanned and checked on its own; nil when it failed (counted or logged).
    private func readState(_ response: HTTPClientResponse?, target: String, _ context: UserContext) -> ReadStateSummary? {
        guard let response, response.status == 200 else { return nil }
        let state: ReadStateSummary
        do {
            state = try ReadStateSummary(response.body)
        } catch {
            context.log.violation(.responseShape, "PUT \(target): \(error)")
            return nil
        }
        if !(0...999).contains(state.unreadCount) || (state.unreadCapped && state.unreadCount != 999)
            || (state.firstUnreadID == nil) != (state.unreadCount == 0)
            || (state.firstUnreadID.map { $0 <= state.lastReadID ?? 0 } ?? false) {
            context.log.violation(.inboxRowConsistent, "PUT \(target): last_read_id \(InboxChecks.text(state.lastReadID)), "
                                  + "first_unread_id \(InboxChecks.text(state.firstUnreadID)), unread_count \(state.unreadCount), "
                                  + "unread_capped \(state.unreadCapped)")
        }
        return state
    }

    private func finishCycle(_ context: UserContext) {
        reading = nil
        steps += 1
        if steps % 16 == 0 { context.flush() }
        run(context)
    }

    /// A cursor is opaque: anything but the unreserved characters is escaped.
    static func percentEncoded(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = String(byte, radix: 16, uppercase: true)
                out += "%" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return out
    }
}

extension ConversationCatalog.Entry {
    /// A conversation known only by its id (from an inbox row): enough to read its pages.
    init(id: String) {
        self.init(id: id, messageCount: 0, oldestID: nil, newestID: nil, version: 0,
                  messagesPrefix: "/v1/conversations/\(id)/messages?", eventsPrefix: "/v1/conversations/\(id)/events?")
    }
}
