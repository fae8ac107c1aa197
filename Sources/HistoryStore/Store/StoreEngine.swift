/// What a database must supply for `StoreFront` to be a whole
/// `HistoryStore`: a snapshot to read in, a queue of writes, and the wait
/// table its commits (its own, and with several instances everyone's)
/// are published to. Everything else (validation, access, waits and their
/// cancellation, closing, the async forms) is written once, in the front.
///
/// The shape follows GRDB's `DatabaseWriter`: a few primitives per backend,
/// the rest in shared code over them.
package protocol StoreEngine: Sendable {
    /// Runs `body` in one snapshot on a pooled read connection.
    func read<T>(_ body: (any SnapshotReads) throws(StoreError) -> T) throws(StoreError) -> T

    /// A page, in one snapshot (`query` was validated). The default reads
    /// it alone; an engine whose reads are round trips may read the pages
    /// asked at the same time together.
    func page(of conversation: ConversationID, _ query: PageQuery, access: AccessCheck) throws(StoreError) -> Page

    /// The same page, handed to `completion`. The default reads it on the
    /// caller's thread and calls `completion` before returning; an engine
    /// whose pages wait for a statement of several may call it later, on
    /// another thread, so that no thread is held while a page waits.
    func page(of conversation: ConversationID, _ query: PageQuery, access: AccessCheck,
              completion: @escaping @Sendable (Result<Page, StoreError>) -> Void)

    /// True when `page(…completion:)` may answer later without holding the
    /// caller's thread meanwhile.
    var readsPagesLater: Bool { get }

    /// A conversation once `access` allows its caller, in one snapshot; the
    /// default reads it alone, as `page` does.
    func conversation(_ id: ConversationID, access: AccessCheck) throws(StoreError) -> Conversation

    /// Queues a write for the group-committing writer; its completion runs
    /// once the write is durable, after the commit was published to
    /// `waiters`.
    func submit(_ request: WriteRequest)

    /// The parked long-polls of every feed, woken by the commits the
    /// backend publishes there as `CommittedChange`s.
    var waiters: Waiters { get }
    /// Who is typing: in memory, fed by this instance's calls and (with
    /// several instances) by those the others relay.
    var typing: TypingBoard { get }

    /// Decides `access` to `conversation` for a typing call, as a read of
    /// the conversation would (a stranger: `.conversationNotFound`), and
    /// calls `decided` with the refusal or nil. The default reads in a
    /// snapshot on the caller's thread; an engine whose reads are round
    /// trips gathers the calls and decides many in one statement.
    func decideTypingAccess(_ access: AccessCheck, to conversation: ConversationID,
                            _ decided: @escaping @Sendable (StoreError?) -> Void)

    /// True when `decideTypingAccess` only queues the call and answers on
    /// a queue of its own: its caller's thread never waits.
    var decidesTypingAccessLater: Bool { get }

    /// Each conversation's committed version and members' roles, where
    /// one writer makes every commit (SQLite); nil where others may commit
    /// unseen (PostgreSQL, several instances).
    var keptVersions: KeptVersions? { get }

    /// Proves the database answers now, cheaply and within bounded time.
    func ping() throws(StoreError)

    /// Stops taking writes, writes and answers what is queued. Called once,
    /// when the front closes, before it answers the parked waits.
    func finishWrites()

    /// Closes every connection (and with several instances, stops
    /// listening). Called once, last.
    func close()
}

extension StoreEngine {
    package func page(of conversation: ConversationID, _ query: PageQuery, access: AccessCheck) throws(StoreError) -> Page {
        try read { reads throws(StoreError) in try reads.page(of: conversation, query, access: access) }
    }

    package func page(of conversation: ConversationID, _ query: PageQuery, access: AccessCheck,
                      completion: @escaping @Sendable (Result<Page, StoreError>) -> Void) {
        completion(Result { () throws(StoreError) in try page(of: conversation, query, access: access) })
    }

    package var readsPagesLater: Bool { false }

    package func conversation(_ id: ConversationID, access: AccessCheck) throws(StoreError) -> Conversation {
        try read { reads throws(StoreError) in try reads.conversation(id, access: access) }
    }

    package func decideTypingAccess(_ access: AccessCheck, to conversation: ConversationID,
                                    _ decided: @escaping @Sendable (StoreError?) -> Void) {
        do throws(StoreError) {
            _ = try read { reads throws(StoreError) in try reads.conversation(conversation, access: access) }
            decided(nil)
        } catch {
            decided(error)
        }
    }

    package var decidesTypingAccessLater: Bool { false }

    package var keptVersions: KeptVersions? { nil }
}
