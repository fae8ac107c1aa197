/// The reads every backend offers, each inside one snapshot the backend
/// chose (SQLite: one read transaction; PostgreSQL: one statement, or a
/// read-only transaction for the inbox's several). The front
/// (`StoreFront`) is written once over them.
///
/// Reads about one conversation take the caller's `AccessCheck` and decide
/// it from the role read in that same snapshot, before anything else about
/// the conversation can show through (a stranger's `since` ahead of the
/// version is the same 404 as a missing conversation, not a 400).
package protocol SnapshotReads {
    func conversation(_ id: ConversationID, access: AccessCheck) throws(StoreError) -> Conversation
    /// The same, with the caller's role as the access check read it (nil
    /// for an administrator): what `KeptVersions` learns.
    func conversationWithRole(_ id: ConversationID,
                              access: AccessCheck) throws(StoreError) -> (conversation: Conversation, role: MemberRole?)
    func message(_ messageID: Int64, in id: ConversationID, access: AccessCheck) throws(StoreError) -> Message
    /// `query` was validated.
    func page(of id: ConversationID, _ query: PageQuery, access: AccessCheck) throws(StoreError) -> Page
    /// `query` was validated.
    func changes(in id: ConversationID, _ query: ChangeQuery, access: AccessCheck) throws(StoreError) -> ChangeFeed
    /// `limit` was checked.
    func members(of id: ConversationID, after: UserID?, limit: Int, access: AccessCheck) throws(StoreError) -> MemberPage
    /// nil when not a member, or when the conversation does not exist.
    func role(of user: UserID, in id: ConversationID) throws(StoreError) -> MemberRole?
    func inbox(of user: UserID, limit: Int, after cursor: InboxCursor?) throws(StoreError) -> InboxPage
    /// `query` was validated.
    func inboxChanges(of user: UserID, _ query: InboxChangeQuery) throws(StoreError) -> InboxChangeFeed
    func hasInboxChanges(of user: UserID, after since: Int64) throws(StoreError) -> Bool
    /// The seqs of the user's conversations, at most `limit`.
    func membershipSeqs(of user: UserID, limit: Int) throws(StoreError) -> [Int64]
    /// The backend feed from the change log, with the counter's value in
    /// the same snapshot; `query` was validated.
    func serverChanges(_ query: ServerChangeQuery) throws(StoreError) -> ServerChangeFeed
    /// The `activity` counter as committed.
    func currentActivity() throws(StoreError) -> Int64
}

extension SnapshotReads {
    /// The conversation, then the role in a second lookup: for a backend
    /// that keeps no versions (PostgreSQL), which never asks for it on a
    /// hot path.
    package func conversationWithRole(_ id: ConversationID, access: AccessCheck) throws(StoreError)
        -> (conversation: Conversation, role: MemberRole?) {
        let conversation = try self.conversation(id, access: access)
        return (conversation, try access.user.flatMap { user throws(StoreError) in try role(of: user, in: id) })
    }

    // Administrators' forms, for tools and tests that read without a caller.

    package func message(_ messageID: Int64, in id: ConversationID) throws(StoreError) -> Message {
        try message(messageID, in: id, access: .admin)
    }

    package func page(of id: ConversationID, _ query: PageQuery) throws(StoreError) -> Page {
        try page(of: id, query, access: .admin)
    }

    package func changes(in id: ConversationID, _ query: ChangeQuery) throws(StoreError) -> ChangeFeed {
        try changes(in: id, query, access: .admin)
    }

    package func members(of id: ConversationID, after: UserID?, limit: Int) throws(StoreError) -> MemberPage {
        try members(of: id, after: after, limit: limit, access: .admin)
    }
}
