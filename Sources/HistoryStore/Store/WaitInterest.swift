/// What a parked long-poll waits for, as a value: the one description
/// every wait of the store parks with, and that `Waiters` indexes it by
/// (its conversation, its user, or the whole server), so a commit reaches
/// the waits it concerns and no others.
package enum WaitInterest: Sendable, Hashable {
    /// The conversation's version goes beyond `after` (the `events` feed);
    /// with `ids`, only by a commit that changed a message in that range
    /// (a window's wait: a post past the window does not concern it).
    case conversation(ConversationID, after: Int64, ids: ClosedRange<Int64>?)
    /// Something in the user's inbox feed changes after activity `after`:
    /// a commit in one of the user's conversations, or one changing the
    /// user's marker or memberships.
    case inbox(UserID, after: Int64)
    /// Any commit on the server after activity `after` (the backend feed).
    case server(after: Int64)
}

/// What a commit tells the waits, once readers can see it: published by
/// the backend that committed it (SQLite's batcher, PostgreSQL's writer)
/// or that heard of it (PostgreSQL's listener, for another instance's
/// commits). A commit heard twice wakes nothing twice: a wait ends at the
/// first value above its own.
package enum CommittedChange: Sendable, Hashable {
    /// The conversation's version is now `version`; `changed` names the
    /// messages the commit changed there (nil: unknown, which wakes every
    /// wait on the conversation, range-filtered ones too).
    case version(ConversationID, Int64, changed: ChangedMessageIDs?)
    /// A commit whose last activity value is `activity` changed the inboxes
    /// of these conversations (by `seq`) and the markers or memberships of
    /// these users.
    case activity(Int64, conversations: Set<Int64>, users: Set<String>)
}

/// The reads a wait makes when publications alone cannot tell whether
/// it is satisfied already. Each answers nil when it cannot read: the wait
/// then ends by a commit, its timeout or close.
package protocol WaitLookups {
    /// The conversation's committed version.
    func version(of conversation: ConversationID) -> Int64?
    /// The server's committed activity.
    func activity() -> Int64?
    /// Up to `limit` of the user's conversations, by `seq`.
    func membershipSeqs(of user: UserID, limit: Int) -> [Int64]?
    /// Whether the user's inbox feed has something after `activity`.
    func hasInboxChanges(of user: UserID, after activity: Int64) -> Bool?
}
