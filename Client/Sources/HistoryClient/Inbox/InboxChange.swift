/// What one operation did to ``Inbox/rows``, row by row, so a list view can
/// animate a conversation moving to the top instead of reloading and
/// jumping under the user's finger.
///
/// Indices are sequential: apply the changes one after the other, each to
/// the array the previous one left, and the old rows become the new ones
/// (`removed` first removes, `moved` removes at `from` and inserts at `to`,
/// an index of the array after the removal). That is what
/// `UITableView.performBatchUpdates` and SwiftUI animations need once
/// translated; ``apply(to:)`` replays them on any array of ids.
public enum InboxChange: Hashable, Sendable {
    /// A conversation came into the list (a page, a new membership, a row
    /// that moved up into the loaded part).
    case inserted(conversationID: String, at: Int)
    /// A conversation left the list: the membership ended, or the row was
    /// pushed past ``InboxConfiguration/capacity`` (scrolling down fetches
    /// it again).
    case removed(conversationID: String, from: Int)
    /// A conversation changed its place (a new message moves it to the
    /// top). Its content changed too: reload the cell.
    case moved(conversationID: String, from: Int, to: Int)
    /// A conversation's row changed in place (an edit, a delete, the marker
    /// moved on another device): reload the cell.
    case updated(conversationID: String, at: Int)

    public var conversationID: String {
        switch self {
        case .inserted(let id, _), .removed(let id, _), .moved(let id, _, _), .updated(let id, _): id
        }
    }

    /// Replays this change on `ids` (an array parallel to the rows before
    /// it), the way a list's own array follows the inbox.
    public func apply(to ids: inout [String]) {
        switch self {
        case .inserted(let id, let index):
            ids.insert(id, at: index)
        case .removed(_, let index):
            ids.remove(at: index)
        case .moved(let id, let from, let to):
            ids.remove(at: from)
            ids.insert(id, at: to)
        case .updated:
            break
        }
    }
}
