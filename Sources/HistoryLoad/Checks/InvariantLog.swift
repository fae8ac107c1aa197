import Synchronization

/// The invariant violations seen while loading, by name, with the first few
/// descriptions of each so a report says exactly what went wrong.
///
/// Violations are rare (ideally never), so one lock for the whole run costs
/// nothing measurable; the checks themselves are counted in the shards.
final class InvariantLog: Sendable {
    static let examplesKept = 5

    private let state = Mutex([String: Entry]())

    struct Entry: Sendable {
        var count = 0
        var examples: [String] = []
    }

    func violation(_ invariant: Invariant, _ description: @autoclosure () -> String) {
        let text = description()
        state.withLock { entries in
            var entry = entries[invariant.rawValue, default: Entry()]
            entry.count += 1
            if entry.examples.count < Self.examplesKept { entry.examples.append(text) }
            entries[invariant.rawValue] = entry
        }
    }

    var entries: [String: Entry] { state.withLock { $0 } }
    var totalViolations: Int { state.withLock { $0.values.reduce(0) { $0 + $1.count } } }
}

/// The properties the tool checks on the server's answers while it loads it
/// (docs/API.md, "Guarantees" and "Pages"), each counted when checked and logged
/// when violated.
enum Invariant: String, CaseIterable, Sendable {
    /// Within one page, ids strictly ascending.
    case pageAscending = "page_ascending"
    /// A `before`/`after`/range page holds only ids on the asked side of its cursors.
    case pageWithinCursor = "page_within_cursor"
    /// `oldest_id`/`newest_id` are the first and last ids; flags agree with a short page.
    case pageFields = "page_fields"
    /// Pages covering the same ids agree: no id missing from one of them,
    /// none extra (across a walk: no gap, no duplicate).
    case pagesAgree = "pages_agree"
    /// Once a reader saw id N, no unseen id below N appears in that conversation later.
    case noLateLowerID = "no_late_lower_id"
    /// A walk from the newest page to the first message, at one version, sees `message_count` ids.
    case walkCount = "walk_count"
    /// `around`: the anchor is found at `index` when it exists.
    case anchorIndex = "anchor_index"
    /// Every post answered 2xx is readable at the end, with its `client_id`.
    case ackedReadable = "acked_posts_readable"
    /// A post repeated with its `client_id` answers 200 with the original id.
    case idempotentRetry = "idempotent_retry"
    /// `events`: versions ascend, and a created message's id is above every id known at `since`.
    case eventsOrdered = "events_ordered"
    /// A virtual user's MessageWindow stays ascending and within capacity.
    case windowBounded = "window_bounded"
    /// The response was not the JSON the contract describes.
    case responseShape = "response_shape"
    /// Inbox rows come by `last_message.id` descending, within a page and
    /// across the pages of one walk; conversations without messages last, by id.
    case inboxOrder = "inbox_order"
    /// No conversation appears twice in one walk of the inbox pages (or one feed answer).
    case inboxNoRepeat = "inbox_no_repeat"
    /// A row agrees with itself: `last_message` is the conversation's newest,
    /// the unread count is capped at 999 exactly when `unread_capped`, a first
    /// unread exactly when something is unread, above the marker, at most the newest.
    case inboxRowConsistent = "inbox_row_consistent"
    /// Unread counts and first unread ids equal what the user's own reading
    /// shows, where it can know them exactly.
    case unreadExact = "unread_exact"
    /// A read marker never moves back (a lower PUT changes nothing).
    case markerForward = "marker_forward"
    /// The inbox feed: `activity` ascends within an answer and across answers, above `since`.
    case inboxFeedOrdered = "inbox_feed_ordered"
}
