/// `Waiters`' index of the waits for a counter to pass a value: a
/// conversation's version (keyed by conversation) or the server's activity
/// (one key), so a commit looks only at the waits on what it advanced.
///
/// While a key has parked waits, the latest value published for it is kept
/// (and only then, so the map stays as small as the set of waits): a wait
/// parking beside them learns from it whether it is satisfied already,
/// without a read.
struct CounterWaitIndex<Key: Hashable> {
    private struct Wait {
        let after: Int64
        /// Only commits that changed a message in this range wake it.
        let ids: ClosedRange<Int64>?
    }

    private var waits: [Key: [UInt64: Wait]] = [:]
    private var latest: [Key: Int64] = [:]

    var isEmpty: Bool { waits.isEmpty }

    /// Registers a wait; returns the latest value published for `key` since
    /// its first parked wait (nil: none, the wait must look).
    mutating func insert(_ token: UInt64, key: Key, after: Int64, ids: ClosedRange<Int64>?) -> Int64? {
        waits[key, default: [:]][token] = Wait(after: after, ids: ids)
        return latest[key]
    }

    /// A look read `current` for a wait still parked under `key`: keeps the
    /// larger of it and what a publication brought meanwhile (a publish may
    /// have raced ahead of the read), and returns it.
    mutating func learn(_ current: Int64, key: Key) -> Int64 {
        let value = max(latest[key] ?? current, current)
        latest[key] = value
        return value
    }

    /// Removes and returns the waits `value` satisfies. `changed`: the
    /// messages the commit changed (nil: unknown, which wakes every wait);
    /// a wait whose range none of them is in stays parked, its `after`
    /// unchanged, so a later commit in its range still wakes it and its
    /// read covers everything since.
    mutating func woken(by value: Int64, key: Key, changed: ChangedMessageIDs? = nil) -> [UInt64] {
        guard let parked = waits[key] else { return [] }
        latest[key] = max(latest[key] ?? value, value)
        var woken: [UInt64] = []
        for (token, wait) in parked where wait.after < value {
            if let ids = wait.ids, let changed, !changed.intersects(ids) { continue }
            woken.append(token)
        }
        for token in woken { remove(token, key: key) }
        return woken
    }

    mutating func remove(_ token: UInt64, key: Key) {
        guard waits[key]?.removeValue(forKey: token) != nil, waits[key]?.isEmpty == true else { return }
        waits[key] = nil
        latest[key] = nil
    }

    /// Forgets every wait and every value learnt.
    mutating func removeAll() {
        waits.removeAll()
        latest.removeAll()
    }
}
