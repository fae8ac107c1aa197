extension MessageWindow {
    /// Applies the answer to `request` (from ``nextRequest(for:)``).
    ///
    /// - `.newest`, a `reset` answer to `after&window`, `.around` and
    ///   `.aroundTime` replace the window (``WindowChange/replaced``,
    ///   ``WindowChange/jumped(anchorID:)``); a newest page equal to the
    ///   rows held changes nothing (`[]`): a screen reopening what it
    ///   shows keeps its place.
    /// - `.before` prepends and, past capacity, trims the newest end (the
    ///   window detaches from the tail).
    /// - `.after` appends and, past capacity, trims the oldest end; the
    ///   window attaches when the page reaches the bottom.
    ///
    /// An answer that no longer fits (the window moved while it was in
    /// flight: its cursor is not the window's edge any more) changes nothing.
    /// A message the window already holds is kept once, in its higher version.
    public mutating func apply(_ page: HistoryPage, for request: WindowRequest) -> [WindowChange] {
        defer { newestReadVersion = Swift.max(newestReadVersion, page.version) }
        switch request.cursor {
        case .newest:
            let before = self
            let changes = replace(with: page, change: .replaced)
            // The newest page the window already shows (asked again and
            // answered 304, or a 200 with the same rows): nothing to redraw.
            if before.isLoaded, before.messages == messages, before.hasOlder == hasOlder,
               before.attachedToTail == attachedToTail {
                return []
            }
            return changes
        case .around(let anchorID):
            // A target that is not there (an id of another conversation, a
            // message purged) must not be scrolled to: anchor on the row
            // that stands where it would be, and say the target was missing.
            let found = page.anchor?.found ?? page.messages.contains { $0.id == anchorID }
            missingJumpTarget = found ? nil : anchorID
            guard let anchor = found ? anchorID : Self.nearestRow(to: anchorID, in: page.messages) else {
                return replace(with: page, change: .replaced)
            }
            return replace(with: page, change: .jumped(anchorID: anchor))
        case .aroundTime:
            // The anchor is the first message at or after the time; none
            // (the time is past the newest message) is the newest page.
            missingJumpTarget = nil
            guard page.anchor?.found == true, let anchor = page.anchor?.id,
                  page.messages.contains(where: { $0.id == anchor }) else {
                return replace(with: page, change: .replaced)
            }
            return replace(with: page, change: .jumped(anchorID: anchor))
        case .after where page.reset == true:
            return replace(with: page, change: .replaced)
        case .before(let cursor):
            return prepend(page, below: cursor)
        case .after(let cursor):
            return append(page, above: cursor)
        case .between:
            // Gap filling is not a move of this window; nothing to apply.
            return []
        }
    }

    /// The first row at or after `id`, else the last row; nil when empty.
    static func nearestRow(to id: Int64, in rows: [HistoryMessage]) -> Int64? {
        rows.first { $0.id >= id }?.id ?? rows.last?.id
    }

    // MARK: - The three kinds of page

    private mutating func prepend(_ page: HistoryPage, below cursor: Int64) -> [WindowChange] {
        guard isLoaded, hasOlder, oldestID == cursor else { return [] }
        let rows = page.messages.filter { $0.id < cursor }
        hasOlder = page.hasOlder
        noteKnown(page.newestID)
        guard !rows.isEmpty else { return [] }
        messages.insert(contentsOf: rows, at: 0)
        noteStaleRows(rows, readAt: page.version)
        return [.prepended(count: rows.count, anchorID: cursor)] + trimToCapacity(at: .newest)
    }

    private mutating func append(_ page: HistoryPage, above cursor: Int64) -> [WindowChange] {
        guard isLoaded, newestID == cursor else { return [] }
        let rows = page.messages.filter { $0.id > cursor }
        noteKnown(page.newestID)
        messages.append(contentsOf: rows)
        attachedToTail = reachesTail(page)
        noteStaleRows(rows, readAt: page.version)
        let changes: [WindowChange] = rows.isEmpty ? [] : [.appended(count: rows.count)]
        return changes + trimToCapacity(at: .oldest)
    }

    private mutating func replace(with page: HistoryPage, change: WindowChange) -> [WindowChange] {
        var rows = page.messages
        // A copy the event feed already refreshed beats the page's older one.
        for index in rows.indices {
            if let held = message(withID: rows[index].id), held.version > rows[index].version {
                rows[index] = held
            }
        }
        // Messages the feed appended while the page was in flight are newer
        // than the page; keep them when they continue it without a gap: the
        // old window was attached (held everything up to the tail) and
        // reached down to the page's last message.
        let pageNewest = page.newestID ?? .min
        if isLoaded, attachedToTail, !page.hasNewer,
           !hasOlder || page.messages.isEmpty || (oldestID ?? .max) <= pageNewest {
            rows += messages.filter { $0.id > pageNewest }
        }
        messages = rows
        isLoaded = true
        hasOlder = page.hasOlder
        noteKnown(page.newestID)
        attachedToTail = !page.hasNewer && (newestKnownID ?? .min) <= (messages.last?.id ?? .min)
        noteStaleRows(page.messages, readAt: page.version)
        return [change] + trimToCapacity(at: attachedToTail ? .oldest : .newest)
    }

    /// Whether a page that ends at the window's last row leaves it holding
    /// the newest message: the server says nothing is newer, and no event
    /// told of a newer message after the page was read (such an event was
    /// ignored while detached, so the window would miss it).
    private func reachesTail(_ page: HistoryPage) -> Bool {
        !page.hasNewer && (newestKnownID ?? .min) <= (newestID ?? .min)
    }

    /// Rows read before the feed's position may miss edits and deletes the
    /// feed already delivered (and the window ignored, the rows not being
    /// loaded then); rows read before another page may be older than that
    /// page showed: ask for exactly those rows' changes since the read.
    private mutating func noteStaleRows(_ rows: [HistoryMessage], readAt version: Int64) {
        guard version < Swift.max(eventVersion, newestReadVersion), let first = rows.first, let last = rows.last
        else { return }
        pendingRefreshes.append(WindowRefresh(since: version, minID: first.id, maxID: last.id))
    }
}
