/// The ids of the messages one commit created, edited or deleted in one
/// conversation, as sorted, disjoint ranges (a batch of appends is one
/// range): what a wait filtered to an id range is checked against, so a
/// commit that cannot concern it does not wake it.
package struct ChangedMessageIDs: Sendable, Hashable {
    /// Sorted, disjoint, not touching.
    package private(set) var ranges: [ClosedRange<Int64>]

    /// From ids in any order, duplicates allowed.
    package init<IDs: Sequence<Int64>>(_ ids: IDs) {
        var ranges: [ClosedRange<Int64>] = []
        for id in ids.sorted() {
            if let last = ranges.last, id <= last.upperBound { continue }
            if let last = ranges.last, last.upperBound < Int64.max, id == last.upperBound + 1 {
                ranges[ranges.count - 1] = last.lowerBound...id
            } else {
                ranges.append(id...id)
            }
        }
        self.ranges = ranges
    }

    package init(range: ClosedRange<Int64>) {
        ranges = [range]
    }

    /// From ranges in any order, overlapping or touching (a NOTIFY payload's
    /// list): merged into the sorted, disjoint form.
    package init(ranges given: [ClosedRange<Int64>]) {
        var ranges: [ClosedRange<Int64>] = []
        for range in given.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if let last = ranges.last,
               range.lowerBound <= last.upperBound || (last.upperBound < Int64.max && range.lowerBound == last.upperBound + 1) {
                ranges[ranges.count - 1] = last.lowerBound...max(last.upperBound, range.upperBound)
            } else {
                ranges.append(range)
            }
        }
        self.ranges = ranges
    }

    package var isEmpty: Bool { ranges.isEmpty }

    /// True when some changed id lies in `range` (a binary search).
    package func intersects(_ range: ClosedRange<Int64>) -> Bool {
        // The first stored range that ends at or after the wanted start.
        var low = 0
        var high = ranges.count
        while low < high {
            let middle = (low + high) / 2
            if ranges[middle].upperBound < range.lowerBound { low = middle + 1 } else { high = middle }
        }
        return low < ranges.count && ranges[low].lowerBound <= range.upperBound
    }
}
