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

    /// Merges in one pass: new rows are collected by id (the highest
    /// version of each), sorted, and merged with the held rows like two
    /// sorted lists, so an answer of `m` messages into `n` rows costs
    /// `O(n + m log m)`, not `O(n * m)`.
    ///
    /// Rows that the capacity trims at once are never reported as added,
    /// and the trim counts held rows only, so replaying the changes in
    /// order (``WindowChange/replay(_:on:final:id:)``) gives the new rows.
    private mutating func merge(_ incoming: [HistoryMessage]) -> [WindowChange] {
        var updated: [Int64] = []
        var updatedIDs: Set<Int64> = []
        var added: [Int64: HistoryMessage] = [:]
        for message in incoming {
            noteKnown(message.id)
            guard covers(message.id) else { continue }
            if let index = index(ofID: message.id) {
                if message.version > messages[index].version {
                    messages[index] = message
                    if updatedIDs.insert(message.id).inserted { updated.append(message.id) }
                }
            } else if let held = added[message.id], held.version >= message.version {
                continue
            } else {
                added[message.id] = message
            }
        }
        let edge: WindowEdge = attachedToTail ? .oldest : .newest
        guard !added.isEmpty else {
            return (updated.isEmpty ? [] : [.updated(ids: updated)]) + trimToCapacity(at: edge)
        }
        let newRows = added.values.sorted { $0.id < $1.id }
        let previousNewest = newestID ?? .min
        // Two sorted lists into one; `isNew` marks where each row came from.
        var merged: [HistoryMessage] = []
        var isNew: [Bool] = []
        merged.reserveCapacity(messages.count + newRows.count)
        isNew.reserveCapacity(messages.count + newRows.count)
        var held = 0
        var fresh = 0
        while held < messages.count || fresh < newRows.count {
            if fresh == newRows.count || (held < messages.count && messages[held].id < newRows[fresh].id) {
                merged.append(messages[held]); isNew.append(false); held += 1
            } else {
                merged.append(newRows[fresh]); isNew.append(true); fresh += 1
            }
        }
        // The capacity's cut, decided before reporting anything.
        let excess = Swift.max(0, merged.count - configuration.capacity)
        let kept = edge == .oldest ? excess..<merged.count : 0..<(merged.count - excess)
        let droppedHeld = (0..<merged.count).filter { !kept.contains($0) && !isNew[$0] }.count
        var inserted: [Int64] = []
        var appendedCount = 0
        for index in kept where isNew[index] {
            if merged[index].id < previousNewest { inserted.append(merged[index].id) } else { appendedCount += 1 }
        }
        messages = Array(merged[kept])
        var changes: [WindowChange] = []
        if !inserted.isEmpty { changes.append(.inserted(ids: inserted)) }
        if appendedCount > 0 { changes.append(.appended(count: appendedCount)) }
        let stillHeld = updated.filter { index(ofID: $0) != nil }
        if !stillHeld.isEmpty { changes.append(.updated(ids: stillHeld)) }
        if excess > 0 {
            switch edge {
            case .oldest: hasOlder = true
            case .newest: attachedToTail = false
            }
            if droppedHeld > 0 { changes.append(.trimmed(edge: edge, count: droppedHeld)) }
        }
        return changes
    }
}
