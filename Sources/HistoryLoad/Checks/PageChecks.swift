/// The cursor a page was asked with, as the checks need it.
enum LoadCursor: Hashable {
    case newest
    case before(Int64)
    case after(Int64)
    /// `after` with `window`: a plain `after` page, or the newest page when `reset`.
    case window(after: Int64, window: Int)
    case between(after: Int64, before: Int64)
    case around(Int64)

    /// The request target's query for this cursor.
    func query(limit: Int) -> String {
        switch self {
        case .newest: "limit=\(limit)"
        case .before(let id): "before=\(id)&limit=\(limit)"
        case .after(let id): "after=\(id)&limit=\(limit)"
        case .window(let id, let window): "after=\(id)&window=\(window)&limit=\(limit)"
        case .between(let after, let before): "after=\(after)&before=\(before)&limit=\(limit)"
        case .around(let id): "around=\(id)&limit=\(limit)"
        }
    }

    var kind: RequestKind {
        switch self {
        case .newest: .newestPage
        case .before: .beforePage
        case .after: .afterPage
        case .window: .windowPage
        case .between: .betweenPage
        case .around: .aroundPage
        }
    }
}

/// The checks one page must pass on its own, and what it states about the
/// conversation for `KnownSpan`.
enum PageChecks {
    /// What a page says is complete: every id in `range` is in the page.
    struct Coverage {
        var range: ClosedRange<Int64>
        var reachesFirst: Bool
    }

    /// Runs every single-page check, logging violations under `context`
    /// (the conversation and the cursor), and returns the page's coverage.
    static func check(_ page: PageSummary, cursor: LoadCursor, limit: Int, context: @autoclosure () -> String,
                      log: InvariantLog, counters: inout CheckCounters) -> Coverage? {
        let ids = page.ids
        counters.pages += 1
        // Ascending, strictly.
        var ascending = true
        for i in ids.indices.dropFirst() where ids[i] <= ids[i - 1] {
            ascending = false
            log.violation(.pageAscending, "\(context()): id \(ids[i]) follows \(ids[i - 1])")
            break
        }
        guard ascending else { return nil }

        // The page's own fields.
        if page.oldestID != ids.first || page.newestID != ids.last {
            log.violation(.pageFields, "\(context()): oldest_id/newest_id \(page.oldestID.map(String.init) ?? "null")/"
                          + "\(page.newestID.map(String.init) ?? "null") but ids run \(ids.first.map(String.init) ?? "-")...\(ids.last.map(String.init) ?? "-")")
        }
        if ids.count > limit {
            log.violation(.pageFields, "\(context()): \(ids.count) messages for limit \(limit)")
        }
        let short = ids.count < limit
        let isReset = page.reset == true

        switch cursor {
        case .newest:
            if page.hasNewer { log.violation(.pageFields, "\(context()): the newest page says has_newer") }
            if short && page.hasOlder { log.violation(.pageFields, "\(context()): a short newest page says has_older") }
        case .before(let id):
            if let last = ids.last, last >= id {
                log.violation(.pageWithinCursor, "\(context()): id \(last) on a before=\(id) page")
            }
            if short && page.hasOlder { log.violation(.pageFields, "\(context()): a short before page says has_older") }
        case .after(let id), .window(let id, _):
            if case .window = cursor, page.reset == nil {
                log.violation(.pageFields, "\(context()): no reset field beside window")
            }
            if isReset {
                if page.hasNewer { log.violation(.pageFields, "\(context()): a reset page says has_newer") }
            } else {
                if let first = ids.first, first <= id {
                    log.violation(.pageWithinCursor, "\(context()): id \(first) on an after=\(id) page")
                }
                if short && page.hasNewer { log.violation(.pageFields, "\(context()): a short after page says has_newer") }
            }
        case .between(let after, let before):
            if let first = ids.first, first <= after {
                log.violation(.pageWithinCursor, "\(context()): id \(first) on an after=\(after) page")
            }
            if let last = ids.last, last >= before {
                log.violation(.pageWithinCursor, "\(context()): id \(last) on a before=\(before) page")
            }
            if short && page.hasNewer { log.violation(.pageFields, "\(context()): a short range page says has_newer") }
        case .around(let id):
            counters.anchors += 1
            if let anchor = page.anchor {
                let position = ids.firstIndex(of: id)
                if anchor.id != id || anchor.found != (position != nil) || anchor.index != position {
                    log.violation(.anchorIndex, "\(context()): anchor \(anchor) but the id is at \(position.map(String.init) ?? "nowhere")")
                }
            } else {
                log.violation(.anchorIndex, "\(context()): no anchor on an around page")
            }
            if short && (page.hasOlder || page.hasNewer) {
                log.violation(.pageFields, "\(context()): a short around page says more exist")
            }
        }

        // What the page states as complete.
        guard let first = ids.first, let last = ids.last else {
            if case .between(let after, let before) = cursor, !page.hasNewer, after + 1 <= before - 1 {
                return Coverage(range: (after + 1)...(before - 1), reachesFirst: false)
            }
            return nil
        }
        switch cursor {
        case .newest, .around:
            return Coverage(range: first...last, reachesFirst: !page.hasOlder)
        case .window where isReset:
            return Coverage(range: first...last, reachesFirst: !page.hasOlder)
        case .before(let id):
            return Coverage(range: first...max(first, id - 1), reachesFirst: !page.hasOlder)
        case .after(let id), .window(let id, _):
            return Coverage(range: min(id + 1, first)...last, reachesFirst: false)
        case .between(let after, let before):
            return Coverage(range: min(after + 1, first)...(page.hasNewer ? last : max(last, before - 1)), reachesFirst: false)
        }
    }

    /// Merges the page into `span`, logging disagreements.
    static func merge(_ page: PageSummary, _ coverage: Coverage, into span: inout KnownSpan, context: @autoclosure () -> String,
                      log: InvariantLog, counters: inout CheckCounters) {
        let upperBefore = span.upper
        let wasEmpty = span.isEmpty
        let disagreements = span.merge(page.ids[...], covering: coverage.range, version: page.version,
                                       reachesFirst: coverage.reachesFirst)
        counters.merges += 1
        for disagreement in disagreements.prefix(3) {
            switch disagreement {
            case .missing(let id):
                log.violation(.pagesAgree, "\(context()): id \(id) was seen before in this range, the page lacks it")
            case .unexpected(let id) where !wasEmpty && id < upperBefore:
                log.violation(.noLateLowerID, "\(context()): id \(id) appeared below \(upperBefore), inside a range already read complete")
            case .unexpected(let id):
                log.violation(.pagesAgree, "\(context()): id \(id) is new inside a range already read complete")
            }
        }
    }
}

/// How many checks a user ran, folded into its shard now and then.
struct CheckCounters {
    static let revalidationsKey = "pages revalidated (200 or 304)"
    static let notModifiedKey = "304 revalidations"

    var pages = 0
    var merges = 0
    var anchors = 0
    var walksCounted = 0
    var windowChecks = 0
    var eventsChecked = 0
    var retriesChecked = 0
    var inboxPages = 0
    var inboxWalks = 0
    var unreadCompared = 0
    var readingsCompared = 0
    var markersMoved = 0
    var markersHeld = 0
    var inboxEvents = 0
    /// `revalidate`: pages re-read with an `ETag`, and how many were 304.
    var revalidations = 0
    var notModified = 0

    mutating func flush(into state: inout ShardState) {
        if pages > 0 { state.checks["pages checked", default: 0] += pages }
        if revalidations > 0 { state.checks[Self.revalidationsKey, default: 0] += revalidations }
        if notModified > 0 { state.checks[Self.notModifiedKey, default: 0] += notModified }
        if merges > 0 { state.checks["page overlaps compared", default: 0] += merges }
        if anchors > 0 { state.checks["anchors checked", default: 0] += anchors }
        if walksCounted > 0 { state.checks["complete walks counted", default: 0] += walksCounted }
        if windowChecks > 0 { state.checks["window states checked", default: 0] += windowChecks }
        if eventsChecked > 0 { state.checks["events checked", default: 0] += eventsChecked }
        if retriesChecked > 0 { state.checks["idempotent retries checked", default: 0] += retriesChecked }
        if inboxPages > 0 { state.checks["inbox pages checked", default: 0] += inboxPages }
        if inboxWalks > 0 { state.checks["inbox walks checked", default: 0] += inboxWalks }
        if unreadCompared > 0 { state.checks["unread counts at a marked newest message compared", default: 0] += unreadCompared }
        if readingsCompared > 0 { state.checks["unread counts compared with the messages read", default: 0] += readingsCompared }
        if markersMoved > 0 { state.checks["read markers moved", default: 0] += markersMoved }
        if markersHeld > 0 { state.checks["read markers held against a lower PUT", default: 0] += markersHeld }
        if inboxEvents > 0 { state.checks["inbox feed events checked", default: 0] += inboxEvents }
        self = CheckCounters()
    }
}
