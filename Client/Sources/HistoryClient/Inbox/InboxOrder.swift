/// A row's place in the inbox, as the server orders it: conversations with
/// messages by last message id, newest first, then those without messages
/// by conversation id (byte order, as the database compares).
///
/// Message ids are unique across the server, so two conversations never
/// share a place. "Less" means "higher in the list".
struct InboxPlace: Comparable, Hashable, Sendable {
    /// Nil for a conversation without messages.
    let lastMessageID: Int64?
    let conversationID: String

    init(_ row: HistoryInboxRow) {
        lastMessageID = row.lastMessage?.id
        conversationID = row.conversation.id
    }

    static func < (lhs: InboxPlace, rhs: InboxPlace) -> Bool {
        switch (lhs.lastMessageID, rhs.lastMessageID) {
        case let (left?, right?) where left != right:
            left > right
        case (.some, nil):
            true
        case (nil, .some):
            false
        default:
            lhs.conversationID.utf8.lexicographicallyPrecedes(rhs.conversationID.utf8)
        }
    }
}

/// How far down the list the inbox knows every row: the rows it holds are
/// exactly the user's conversations placed at or above this (as of the
/// feed's position; stale pages are refreshed).
enum InboxCoverage: Hashable, Sendable {
    /// Nothing loaded yet.
    case none
    /// Every row placed at or above this place.
    case through(InboxPlace)
    /// The whole list: the last page said nothing follows.
    case all

    func includes(_ place: InboxPlace) -> Bool {
        switch self {
        case .none: false
        case .through(let last): place <= last
        case .all: true
        }
    }

    /// The further of the two.
    func extended(to other: InboxCoverage) -> InboxCoverage {
        switch (self, other) {
        case (.all, _), (_, .all): .all
        case (.none, let coverage), (let coverage, .none): coverage
        case (.through(let mine), .through(let theirs)): .through(Swift.max(mine, theirs))
        }
    }
}

/// A cursor the server gave, with the place of the row it follows: a
/// position in the list that stays valid while rows move across it, so the
/// inbox can resume paging from it after dropping rows below.
struct InboxBoundary: Hashable, Sendable {
    let place: InboxPlace
    let cursor: String
}
