extension MessageWindow {
    /// Applies events of the live feed, all changes up to `version` (the
    /// batch's `version`; nil: the highest event version).
    ///
    /// A message inside the window's slice is inserted or refreshed in place
    /// when the event is newer than the row; above the slice it is appended
    /// only while the window is attached to the tail (then the oldest rows
    /// are trimmed past capacity); anything else is outside what the window
    /// shows and only noted (a newer message detaches nothing, but tells the
    /// window the tail moved on). Apply a whole answer at once: the feed is
    /// compacted, so one answer may list a message after a newer one, and
    /// applying event by event would show the gap between them for a moment.
    public mutating func apply(_ events: [HistoryEvent], through version: Int64? = nil) -> [WindowChange] {
        let highest = events.map(\.version).max() ?? eventVersion
        eventVersion = Swift.max(eventVersion, version ?? highest, highest)
        return merge(events.map(\.message))
    }

    /// One event; see ``apply(_:through:)``.
    public mutating func apply(_ event: HistoryEvent) -> [WindowChange] {
        apply([event])
    }

    /// Applies the answer to a ``WindowRefresh`` query: the same rules as
    /// live events, but it does not move ``eventVersion`` (it covers only
    /// some ids).
    public mutating func applyRefresh(_ events: [HistoryEvent]) -> [WindowChange] {
        merge(events.map(\.message))
    }

    // MARK: - Merging

    /// Whether `id` belongs to the slice the window shows: between its first
    /// and last row, below the first when nothing is older, above the last
    /// when attached to the tail.
    func covers(_ id: Int64) -> Bool {
        guard isLoaded else { return false }
        let aboveFloor = !hasOlder || (oldestID.map { id >= $0 } ?? false)
        let belowCeiling = attachedToTail || (newestID.map { id <= $0 } ?? false)
        return aboveFloor && belowCeiling
    }

    private mutating func merge(_ incoming: [HistoryMessage]) -> [WindowChange] {
        var updated: [Int64] = []
        var added: [HistoryMessage] = []
        for message in incoming {
            noteKnown(message.id)
            guard covers(message.id) else { continue }
            if let index = index(ofID: message.id) {
                if message.version > messages[index].version {
                    messages[index] = message
                    updated.append(message.id)
                }
            } else if let index = added.firstIndex(where: { $0.id == message.id }) {
                if message.version > added[index].version { added[index] = message }
            } else {
                added.append(message)
            }
        }
        var changes: [WindowChange] = []
        if !added.isEmpty {
            added.sort { $0.id < $1.id }
            let previousNewest = newestID ?? .min
            let appended = added.filter { $0.id > previousNewest }
            let inserted = added.filter { $0.id < previousNewest }
            for message in inserted {
                messages.insert(message, at: insertionIndex(forID: message.id))
            }
            messages.append(contentsOf: appended)
            if !inserted.isEmpty { changes.append(.inserted(ids: inserted.map(\.id))) }
            if !appended.isEmpty { changes.append(.appended(count: appended.count)) }
        }
        if !updated.isEmpty { changes.append(.updated(ids: updated)) }
        return changes + trimToCapacity(at: attachedToTail ? .oldest : .newest)
    }
}
