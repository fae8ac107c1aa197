/// What one reader knows for certain about a stretch of one conversation:
/// every id in `lower...upper`, exactly.
///
/// Each page is a statement "these are all the ids in this range" (the range
/// follows from its cursor: a `before=X` page covers its first id up to
/// X-1, a newest page its first id up to its last). Ids never disappear
/// (tombstones keep their place) and a new message always gets an id above
/// every id already committed in its conversation (docs/API.md, guarantee 2), so
/// two statements about the same range must agree, whenever they were made:
/// - an id the span knows but a later page of that range lacks is a gap
///   (a skipped id; across a walk, a hole between pages);
/// - an id a page shows inside a range the span knew complete, and that the
///   span lacks, is a late lower id (or a duplicate from a misplaced cursor).
/// Overlaps arise naturally: newest pages re-read the tail, a `before` page
/// and an `after` page cut the same ids at different boundaries.
struct KnownSpan {
    /// The most ids kept; past it the end away from the latest statement is dropped
    /// (knowing less is still knowing right).
    static let maximumIDs = 4_096

    private(set) var ids: [Int64] = []
    private(set) var lower: Int64 = 0
    private(set) var upper: Int64 = -1
    /// Nothing exists below `lower` (a page said `has_older: false`).
    private(set) var reachesFirst = false
    /// The versions of the pages merged into the span since it was last restarted.
    private(set) var versions: ClosedRange<Int64>?

    var isEmpty: Bool { upper < lower }

    enum Disagreement: Equatable {
        /// The span knew `id` inside the page's range; the page lacks it.
        case missing(Int64)
        /// The page shows `id` inside a range the span knew complete without it.
        case unexpected(Int64)
    }

    /// Merges a page that states `pageIDs` (ascending) are all the ids in
    /// `range`, returning where it disagrees with what was known.
    /// - Parameter reachesFirst: the page said nothing exists below its range.
    mutating func merge(_ pageIDs: ArraySlice<Int64>, covering range: ClosedRange<Int64>, version: Int64,
                        reachesFirst pageReachesFirst: Bool) -> [Disagreement] {
        var disagreements: [Disagreement] = []
        let overlaps = !isEmpty && range.lowerBound <= upper &+ 1 && range.upperBound >= lower &- 1
        guard overlaps else {
            restart(pageIDs, range: range, version: version, reachesFirst: pageReachesFirst)
            return []
        }
        // Compare both sorted lists on the common range.
        let commonLower = max(lower, range.lowerBound)
        let commonUpper = min(upper, range.upperBound)
        if commonLower <= commonUpper {
            let common = commonLower...commonUpper
            var i = firstIndex(in: ids[...], atLeast: common.lowerBound)
            var j = firstIndex(in: pageIDs, atLeast: common.lowerBound)
            while true {
                let known = i < ids.count && ids[i] <= common.upperBound ? ids[i] : nil
                let seen = j < pageIDs.endIndex && pageIDs[j] <= common.upperBound ? pageIDs[j] : nil
                switch (known, seen) {
                case (nil, nil):
                    break
                case (let k?, let s?) where k == s:
                    i += 1; j += 1; continue
                case (let k?, let s?) where k < s:
                    disagreements.append(.missing(k)); i += 1; continue
                case (let k?, nil):
                    disagreements.append(.missing(k)); i += 1; continue
                case (_, let s?):
                    disagreements.append(.unexpected(s)); j += 1; continue
                }
                break
            }
        }
        // Union: what lies outside the old range comes from the page.
        let below = pageIDs.prefix { $0 < lower }
        let above = pageIDs.drop { $0 <= upper }
        if !below.isEmpty || range.lowerBound < lower {
            ids.insert(contentsOf: below, at: 0)
            lower = range.lowerBound
            reachesFirst = pageReachesFirst
        } else if pageReachesFirst && range.lowerBound == lower {
            reachesFirst = true
        }
        if !above.isEmpty || range.upperBound > upper {
            ids.append(contentsOf: above)
            upper = range.upperBound
        }
        versions = min(versions?.lowerBound ?? version, version)...max(versions?.upperBound ?? version, version)
        trim(keepingNear: range)
        return disagreements
    }

    /// Forgets everything (the reader moved far away, e.g. jumped).
    mutating func clear() {
        ids.removeAll(keepingCapacity: true)
        lower = 0
        upper = -1
        reachesFirst = false
        versions = nil
    }

    private mutating func restart(_ pageIDs: ArraySlice<Int64>, range: ClosedRange<Int64>, version: Int64, reachesFirst: Bool) {
        ids.removeAll(keepingCapacity: true)
        ids.append(contentsOf: pageIDs)
        lower = range.lowerBound
        upper = range.upperBound
        self.reachesFirst = reachesFirst
        versions = version...version
    }

    private mutating func trim(keepingNear range: ClosedRange<Int64>) {
        let excess = ids.count - Self.maximumIDs
        guard excess > 0 else { return }
        if range.lowerBound - lower < upper - range.upperBound {
            // The latest page is near the bottom of the span: drop the top.
            ids.removeLast(excess)
            upper = ids.last.map { $0 } ?? lower - 1
        } else {
            ids.removeFirst(excess)
            lower = ids.first ?? upper + 1
            reachesFirst = false
        }
    }

    private func firstIndex(in list: ArraySlice<Int64>, atLeast value: Int64) -> Int {
        var low = list.startIndex
        var high = list.endIndex
        while low < high {
            let middle = (low + high) / 2
            if list[middle] < value { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
