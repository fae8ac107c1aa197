import HistoryAccess
import HistoryStore

/// A request parked until something it reads changes: a `LongPoll` over a
/// conversation's feed or over a user's inbox feed.
///
/// `LongPollRegistry` holds both kinds under one per-client allowance, so
/// a client cannot park twice its share by splitting it over two feeds,
/// and a draining server answers both.
protocol ParkedPoll: AnyObject, Sendable {
    /// Whose parked-poll allowance the poll uses; nil for an admin token.
    var client: ClientKey? { get }

    /// Ends the current wait early; the poll then answers (harmless after it has).
    func cancel()

    /// `user` was removed from `conversation`: a poll that reads that
    /// conversation as that user answers 404 now; any other poll ignores it.
    func revokeIfReading(_ conversation: ConversationID, as user: UserID)

    /// The user this poll reads a conversation as, if it reads one as a member.
    var memberUser: UserID? { get }

    /// Asks the store whether the poll's user is still a member, and
    /// answers 404 now if not (a removal through another instance, heard
    /// from the store). Reads: call it where blocking is allowed.
    func recheckMembership()
}
