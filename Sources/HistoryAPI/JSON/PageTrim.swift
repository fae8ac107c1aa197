import HistoryStore

/// Which messages a page keeps when all of them would make its JSON larger
/// than the response budget: those next to the cursor, so that the next
/// page, asked on the cursor the answer gives, continues without a gap.
public enum PageTrim: Hashable, Sendable {
    /// The newest messages stay, the oldest go (`has_older` becomes true):
    /// the newest page, `before`, and an `after` page whose `window` reset it.
    case keepNewest
    /// The oldest messages stay, the newest go (`has_newer` becomes true):
    /// `after` and `between`, which read upward from their cursor.
    case keepOldest
    /// The anchor stays, messages go from both ends: `around`.
    case keepAnchor

    /// The trim for a page answered to `query`; `reset` is the page's own.
    public init(_ query: PageQuery, reset: Bool?) {
        if reset == true {
            self = .keepNewest
            return
        }
        switch query.cursor {
        case .newest, .before: self = .keepNewest
        case .after, .between: self = .keepOldest
        case .around, .aroundTime: self = .keepAnchor
        }
    }
}
