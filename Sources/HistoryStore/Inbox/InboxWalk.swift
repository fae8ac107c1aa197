/// How an inbox page is chosen, written once for both backends: which of a
/// user's conversations come next in inbox order after a cursor, without a
/// cost that grows with how many conversations the user has.
///
/// A user with few memberships (`smallInbox`) has them all read and sorted.
/// A user with many has the inbox order walked over every conversation,
/// probing the user's membership of each (`InboxWalkSteps`, the backend's
/// statements), in chunks that start at twice what is still missing and
/// double while the user's rows are sparse; after `max(64 * wanted, 4096)`
/// conversations without finding them all, the user's are rare among the
/// recent ones and reading all of its memberships is cheaper (`walk`
/// answers nil).
package enum InboxWalk {
    /// Up to this many memberships, a page reads them all and sorts them.
    package static let smallInbox = 256

    /// The next `wanted` of the user's conversations after `cursor` (from
    /// the top when nil), or nil when the walk ran out of budget.
    package static func walk<Steps: InboxWalkSteps>(after cursor: InboxCursor?, wanted: Int,
                                                    steps: inout Steps) throws(StoreError) -> [Steps.Place]? {
        let budget = max(64 * wanted, 4096)
        var examined = 0
        var found: [Steps.Place] = []
        var chunk = 0
        func nextChunk() -> Int {
            chunk = min(max(2 * (wanted - found.count), 2 * chunk, 16), 1024)
            return min(chunk, budget - examined)
        }
        var below = Int64.max
        var after = ""
        let walksMessages: Bool
        switch cursor {
        case nil: walksMessages = true
        case .message(let newest)?: walksMessages = true; below = newest
        case .empty(let id)?: walksMessages = false; after = id.rawValue
        }
        // The conversations with messages, newest first...
        while walksMessages && found.count < wanted {
            guard examined < budget else { return nil }
            let step = try steps.withMessages(below: below, size: nextChunk(), missing: wanted - found.count)
            found += step.found
            examined += step.examined
            guard let next = step.next else { break }
            below = next
        }
        // ...then those without messages, by id.
        while found.count < wanted {
            guard examined < budget else { return nil }
            let step = try steps.withoutMessages(after: after, size: nextChunk(), missing: wanted - found.count)
            found += step.found
            examined += step.examined
            guard let next = step.next else { break }
            after = next
        }
        return found
    }

    /// The page out of `candidates` (the user's conversations the walk or
    /// a full read found): those after `cursor`, in inbox order, at most
    /// `limit`, and whether more follow.
    package static func page<Place: InboxPlaced>(_ candidates: [Place], after cursor: InboxCursor?,
                                                 limit: Int) -> (rows: ArraySlice<Place>, hasMore: Bool) {
        var candidates = candidates
        if let cursor { candidates.removeAll { !cursor.precedes($0.place) } }
        candidates.sort { $0.place.precedes($1.place) }
        return (candidates.prefix(limit), candidates.count > limit)
    }
}

/// Something with a place in the inbox order.
package protocol InboxPlaced {
    var place: InboxCursor { get }
}

/// A backend's two statements for `InboxWalk`: each reads up to `size`
/// conversations of one part of the inbox order from a position, and
/// answers the user's among them (at most `missing`), how many it examined,
/// and where the next step starts (nil when that part of the order is
/// exhausted).
package protocol InboxWalkSteps {
    associatedtype Place: InboxPlaced

    /// Conversations with messages whose newest id is below `below`, newest first.
    mutating func withMessages(below: Int64, size: Int,
                               missing: Int) throws(StoreError) -> (found: [Place], examined: Int, next: Int64?)

    /// Conversations without messages whose id is after `after`, by id.
    mutating func withoutMessages(after: String, size: Int,
                                  missing: Int) throws(StoreError) -> (found: [Place], examined: Int, next: String?)
}
