extension WindowChange {
    /// Replays `changes`, in order, on the rows a screen showed before them,
    /// taking each new row's content from `final` (the rows after them):
    /// what a list data source does step by step, and the proof that a
    /// change list says everything that happened.
    ///
    /// ```swift
    /// let before = window.messages
    /// let changes = window.apply(page, for: request)
    /// assert(WindowChange.replay(changes, on: before, final: window.messages, id: \.id).map(\.id)
    ///        == window.messages.map(\.id))
    /// ```
    ///
    /// ``replaced`` and ``jumped(anchorID:)`` mean "everything is new":
    /// the rows become `final`, which already includes whatever the changes
    /// after them in the same list did (a trim, a refresh's updates).
    /// Rows are found in `final` by id (ascending, as in a window).
    public static func replay<Row>(_ changes: [WindowChange], on old: [Row], final new: [Row],
                                   id: (Row) -> Int64) -> [Row] {
        var rows = old
        // The first index of `new` whose id is at least `target`.
        func position(of target: Int64) -> Int {
            var low = 0
            var high = new.count
            while low < high {
                let middle = (low + high) / 2
                if id(new[middle]) < target { low = middle + 1 } else { high = middle }
            }
            return low
        }
        func row(withID target: Int64) -> Row? {
            let index = position(of: target)
            return index < new.count && id(new[index]) == target ? new[index] : nil
        }
        for change in changes {
            switch change {
            case .replaced, .jumped:
                return new
            case .prepended(let count, _):
                let end = rows.first.map { position(of: id($0)) } ?? Swift.min(count, new.count)
                rows.insert(contentsOf: new[Swift.max(0, end - count)..<end], at: 0)
            case .appended(let count):
                let start = rows.last.map { position(of: id($0) + 1) } ?? 0
                rows.append(contentsOf: new[start..<Swift.min(start + count, new.count)])
            case .inserted(let ids):
                for target in ids {
                    guard let inserted = row(withID: target) else { continue }
                    let index = rows.firstIndex { id($0) > target } ?? rows.count
                    rows.insert(inserted, at: index)
                }
            case .trimmed(.oldest, let count):
                rows.removeFirst(Swift.min(count, rows.count))
            case .trimmed(.newest, let count):
                rows.removeLast(Swift.min(count, rows.count))
            case .updated(let ids):
                for target in ids {
                    guard let updated = row(withID: target),
                          let index = rows.firstIndex(where: { id($0) == target }) else { continue }
                    rows[index] = updated
                }
            }
        }
        return rows
    }
}
