/// What one operation did to ``MessageWindow/messages``, by nature, so a
/// list view can keep its scroll position without diffing and guessing.
///
/// An operation returns its changes in the order they happened; an empty
/// array means no row changed (a flag such as ``MessageWindow/hasOlder``
/// may still have).
public enum WindowChange: Hashable, Sendable {
    /// Everything was replaced by the newest messages: scroll to the bottom.
    /// (A newest page equal to the rows held is no change at all: `[]`.)
    case replaced
    /// Everything was replaced by the page around a message (jumping to a
    /// reply's original): scroll so `anchorID` is visible.
    case jumped(anchorID: Int64)
    /// `count` older rows were inserted above. Keep `anchorID` (the row that
    /// was on top before) where it is on screen: add the inserted height to
    /// the scroll offset, or anchor the layout on it. Nil when the window was empty.
    case prepended(count: Int, anchorID: Int64?)
    /// `count` newer rows were added at the bottom: scroll to them if the
    /// user was at the bottom, else leave the view alone.
    case appended(count: Int)
    /// Rows inserted between loaded ones (a compacted event feed may report
    /// a message after a newer one); find them by id in the new array.
    case inserted(ids: [Int64])
    /// `count` rows were dropped at one edge to stay within capacity (or to
    /// shrink back to one page at the bottom).
    case trimmed(edge: WindowEdge, count: Int)
    /// Rows changed in place (edited or deleted): reload those cells.
    case updated(ids: [Int64])
}

/// An end of the window: top (oldest) or bottom (newest).
public enum WindowEdge: Hashable, Sendable {
    case oldest
    case newest
}
