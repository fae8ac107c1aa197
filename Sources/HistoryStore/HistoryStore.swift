import Dispatch

/// The operations the server needs from a message store.
///
/// Reads are synchronous: they run on a pooled reader connection and take
/// tens of microseconds, less than a thread hop would cost. Writes take a
/// completion handler because they wait for a group commit: the caller's
/// thread is never blocked while its batch becomes durable. Completion
/// handlers run on the store's own queue and must not block.
///
/// A PostgreSQL store can implement this protocol without the server
/// changing.
public protocol HistoryStore: Sendable {
    // MARK: - Conversations

    /// Creates a conversation; a random id is generated when `id` is nil.
    /// With an `owner`, that user is its first member, role `owner`, written
    /// in the same transaction (nil in open mode and for admins: no member).
    /// Fails with `.conversationExists` or `.invalid(field: "title", ...)`.
    func createConversation(id: ConversationID?, title: String?, owner: UserID?,
                            completion: @escaping @Sendable (Result<Conversation, StoreError>) -> Void)

    /// O(1): the kept counters, never a count. `access` is decided in the
    /// same snapshot (as for every read and write below that takes one).
    func conversation(_ id: ConversationID, access: AccessCheck) throws(StoreError) -> Conversation

    /// The conversation's version as last committed, when the store knows
    /// it without a read and no commit can have passed it by unseen (the
    /// SQLite store: one writer makes every commit); nil: read it. For a
    /// 304 decided on the event loop (`KeptVersions`). Never behind what a
    /// read would see; a conversation with a version exists.
    func knownVersion(of conversation: ConversationID) -> Int64?

    /// The user's role in the conversation, when the store knows it
    /// without a read and it is what a read would see (a member's; nil:
    /// read it). For a user's 304 decided on the event loop.
    func knownRole(of user: UserID, in conversation: ConversationID) -> MemberRole?

    // MARK: - Members

    /// Adds a member or changes its role; idempotent (`.unchanged` writes
    /// nothing). Goes through the writer like every write.
    /// Fails `.conversationNotFound`.
    func putMember(_ user: UserID, role: MemberRole, in conversation: ConversationID, access: AccessCheck,
                   completion: @escaping @Sendable (Result<MemberChange, StoreError>) -> Void)

    /// true when a member was removed, false when the user was not a member.
    /// Fails `.conversationNotFound`.
    func removeMember(_ user: UserID, from conversation: ConversationID, access: AccessCheck,
                      completion: @escaping @Sendable (Result<Bool, StoreError>) -> Void)

    /// A keyset page in `user_id` byte order: the members with a user id
    /// greater than `after` (from the first when nil). `limit` is
    /// `MemberPage.limitRange`, else `.invalid(field: "limit", ...)`.
    /// Fails `.conversationNotFound`.
    func members(of conversation: ConversationID, after: UserID?, limit: Int,
                 access: AccessCheck) throws(StoreError) -> MemberPage

    /// The check of every request in tokens mode: one indexed lookup, no scan.
    /// nil when `user` is not a member (or the conversation does not exist,
    /// which the caller must not tell apart anyway).
    func role(of user: UserID, in conversation: ConversationID) throws(StoreError) -> MemberRole?

    // MARK: - Messages

    /// Appends through the group-commit writer; answered after the batch is
    /// durable. A repeated `clientID` answers `.existing` and stores nothing;
    /// the same `clientID` with another sender or body fails `.clientIDConflict`.
    func append(_ message: NewMessage, to conversation: ConversationID, access: AccessCheck,
                completion: @escaping @Sendable (Result<AppendOutcome, StoreError>) -> Void)

    /// Replaces the body and sets `editedAt`; a tombstone fails `.messageDeleted`.
    func edit(messageID: Int64, in conversation: ConversationID, body: String, access: AccessCheck,
              completion: @escaping @Sendable (Result<Message, StoreError>) -> Void)

    /// Tombstones the message: it keeps its id and place, its body is erased.
    /// Deleting a tombstone again answers it unchanged.
    func delete(messageID: Int64, in conversation: ConversationID, access: AccessCheck,
                completion: @escaping @Sendable (Result<Message, StoreError>) -> Void)

    /// One message, tombstone or not.
    func message(_ messageID: Int64, in conversation: ConversationID, access: AccessCheck) throws(StoreError) -> Message

    // MARK: - Reads

    /// A keyset page: index reads only, whatever the depth.
    func page(of conversation: ConversationID, _ query: PageQuery, access: AccessCheck) throws(StoreError) -> Page

    /// The same page through `completion`: before returning, on the
    /// caller's thread, unless `readsPagesLater`; then possibly later, on
    /// a thread of the store's, with no thread held while the page waits
    /// for its statement (PostgreSQL reads the pages asked together in one).
    func page(of conversation: ConversationID, _ query: PageQuery, access: AccessCheck,
              completion: @escaping @Sendable (Result<Page, StoreError>) -> Void)

    /// True when `page(…completion:)` may answer later, on another thread.
    var readsPagesLater: Bool { get }

    /// The compacted changes after `query.since` (the `events` endpoint).
    func changes(in conversation: ConversationID, _ query: ChangeQuery, access: AccessCheck) throws(StoreError) -> ChangeFeed

    // MARK: - Inbox

    /// Moves the user's read marker forward to `messageID`: never back (a
    /// lower id writes nothing and answers the current state), and never
    /// past the conversation's newest message (taken as `newestID`; with no
    /// message the marker stays nil). A move takes a new `activity` value.
    /// `messageID` below 0 fails `.invalid(field: "last_read_id", ...)`.
    /// Fails `.conversationNotFound`, `.memberNotFound`.
    func markRead(_ user: UserID, in conversation: ConversationID, upTo messageID: Int64, access: AccessCheck,
                  completion: @escaping @Sendable (Result<ReadState, StoreError>) -> Void)

    /// A keyset page of the conversations `user` is a member of, newest
    /// message first, then those without messages by id. Its cost does not
    /// grow with the user's number of conversations (see docs/architecture.md).
    /// Fails `.invalid(field: "limit" | "cursor", ...)`.
    func inbox(of user: UserID, _ query: InboxQuery) throws(StoreError) -> InboxPage

    /// The user feed: the user's inbox rows changed after `query.since`, one
    /// per conversation in ascending `activity`, and the memberships ended
    /// since. Fails `.versionAhead(requested:current:)` when `since` is
    /// above the current activity.
    func inboxChanges(of user: UserID, _ query: InboxChangeQuery) throws(StoreError) -> InboxChangeFeed

    /// Like `waitForChange`, for the user feed: `.changed` as soon as a
    /// commit after `activity` touches one of the user's conversations
    /// (append, edit, delete, member list), the user's marker or the user's
    /// memberships (added, removed); at once when the feed already has
    /// something after `activity`. `cancelWait` and `parkedWaitCount` cover
    /// these waits too.
    func waitForInboxChange(of user: UserID, after activity: Int64, timeout: Duration,
                            handler: @escaping @Sendable (WaitOutcome) -> Void) -> WaitToken

    // MARK: - The backend feed

    /// Every change on the server after `query.since`, one event per
    /// change in `activity` order (`GET /v1/events`: administrators only,
    /// which the caller decides). Fails `.versionAhead(requested:current:)`
    /// when `since` is above the current activity.
    func serverChanges(_ query: ServerChangeQuery) throws(StoreError) -> ServerChangeFeed

    /// Like `waitForChange`, for the backend feed: `.changed` as soon as any
    /// commit after `activity` is visible (this instance's or, on
    /// PostgreSQL, another's); at once when one already is. `cancelWait`
    /// and `parkedWaitCount` cover these waits too.
    func waitForServerChange(after activity: Int64, timeout: Duration,
                             handler: @escaping @Sendable (WaitOutcome) -> Void) -> WaitToken

    // MARK: - Wake-ups

    /// Calls `handler` once: with `.changed` as soon as the conversation's
    /// version exceeds `version` (at once if it already does), `.timedOut`
    /// after `timeout`, `.cancelled` after `cancelWait`, `.closing` when the
    /// store shuts down. No thread waits meanwhile.
    ///
    /// With `ids`, a later commit that changed only messages outside that
    /// range does not end the wait: a feed filtered by `min_id`/`max_id`
    /// would read nothing new, so waking it would only cost a read. (A
    /// version already past `version` when the wait starts still answers
    /// `.changed` at once: which ids it changed is no longer known.)
    func waitForChange(in conversation: ConversationID, after version: Int64, ids: ClosedRange<Int64>?,
                       timeout: Duration, handler: @escaping @Sendable (WaitOutcome) -> Void) -> WaitToken

    /// Ends a wait early (the client went away); its handler gets `.cancelled`
    /// unless it already ran.
    func cancelWait(_ token: WaitToken)

    /// Calls `handler` after every commit that changed users' memberships
    /// or read markers, this instance's or (PostgreSQL) another's, with
    /// those users; with nil when such commits may have gone by unheard (a
    /// listener that lost its connection). The HTTP layer answers 404 to a
    /// removed member's parked long-polls through it, whichever instance
    /// removed it. Called on the store's own queues: hand reads elsewhere.
    func observeUserChanges(_ handler: @escaping @Sendable (Set<UserID>?) -> Void)

    /// How many waits are parked now (a metric).
    var parkedWaitCount: Int { get }

    // MARK: - Typing (never stored: see `TypingBoard`)

    /// `user` says it is typing (or stopped) in `conversation`; `access`
    /// is decided in a snapshot as for a read (a stranger: `.conversationNotFound`).
    /// Answered through `completion` (on the store's own queue when
    /// `tellsTypingLater`, else before it returns): true when the call was
    /// broadcast; false when it changed nothing or came within 2 s of the
    /// user's last accepted call.
    func tellTyping(_ typing: Bool, as user: UserID, in conversation: ConversationID, access: AccessCheck,
                    completion: @escaping @Sendable (Result<Bool, StoreError>) -> Void)

    /// True when `tellTyping(…completion:)` never blocks its caller (it
    /// queues the call): the HTTP route may then run on an event loop.
    var tellsTypingLater: Bool { get }

    /// Everyone typing in `conversation` now, in user order.
    func typers(in conversation: ConversationID) -> [UserID]

    /// Calls `handler` with the whole list after every change of
    /// `conversation`'s typers (an expiry too), this instance's or heard
    /// from another, in order, on the store's own queue: it must not block.
    func observeTyping(in conversation: ConversationID,
                       _ handler: @escaping @Sendable ([UserID]) -> Void) -> TypingObservation

    func stopObservingTyping(_ observation: TypingObservation)

    // MARK: - Lifecycle

    /// Proves the store answers now (`/healthz`): cheap, and bounded in
    /// time. Throws `.unavailable` when its database cannot be reached,
    /// `.closed` after `close()`.
    func ping() throws(StoreError)

    /// Answers every parked wait with `.closing`, finishes queued writes,
    /// then closes every connection. Later calls fail with `.closed`.
    func close()
}

/// How a `waitForChange` ended.
public enum WaitOutcome: Hashable, Sendable {
    case changed
    case timedOut
    case cancelled
    case closing
}

/// Names one parked wait, for `cancelWait`.
public struct WaitToken: Hashable, Sendable {
    public let rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }
}

// MARK: - async conveniences

extension HistoryStore {
    /// A read of a conversation that need not exist: "not found" is an
    /// answer, so it proves a read works without a probe table.
    /// A store without commits of its own to report (a wrapper in tests)
    /// reports none.
    public func observeUserChanges(_ handler: @escaping @Sendable (Set<UserID>?) -> Void) {}

    /// A store that keeps no versions (a wrapper in tests): every
    /// conditional request is read.
    public func knownVersion(of conversation: ConversationID) -> Int64? { nil }

    public func knownRole(of user: UserID, in conversation: ConversationID) -> MemberRole? { nil }

    /// A store without a typing board of its own (a wrapper in tests)
    /// shows no one typing.
    public func tellTyping(_ typing: Bool, as user: UserID, in conversation: ConversationID, access: AccessCheck,
                           completion: @escaping @Sendable (Result<Bool, StoreError>) -> Void) {
        completion(Result { () throws(StoreError) in
            _ = try self.conversation(conversation, access: access)
            return false
        })
    }

    public var tellsTypingLater: Bool { false }

    public func typers(in conversation: ConversationID) -> [UserID] { [] }

    public func observeTyping(in conversation: ConversationID,
                              _ handler: @escaping @Sendable ([UserID]) -> Void) -> TypingObservation {
        TypingObservation(rawValue: 0)
    }

    public func stopObservingTyping(_ observation: TypingObservation) {}

    public func ping() throws(StoreError) {
        do {
            _ = try conversation(ConversationID("healthz-probe")!, access: .admin)
        } catch .conversationNotFound {
            // The store answered.
        }
    }

    // Administrators' forms (tools, tests, open mode): everything allowed.

    public func conversation(_ id: ConversationID) throws(StoreError) -> Conversation {
        try conversation(id, access: .admin)
    }

    public func members(of conversation: ConversationID, after: UserID?, limit: Int) throws(StoreError) -> MemberPage {
        try members(of: conversation, after: after, limit: limit, access: .admin)
    }

    public func message(_ messageID: Int64, in conversation: ConversationID) throws(StoreError) -> Message {
        try message(messageID, in: conversation, access: .admin)
    }

    public func page(of conversation: ConversationID, _ query: PageQuery) throws(StoreError) -> Page {
        try page(of: conversation, query, access: .admin)
    }

    public func changes(in conversation: ConversationID, _ query: ChangeQuery) throws(StoreError) -> ChangeFeed {
        try changes(in: conversation, query, access: .admin)
    }

    public func putMember(_ user: UserID, role: MemberRole, in conversation: ConversationID,
                          completion: @escaping @Sendable (Result<MemberChange, StoreError>) -> Void) {
        putMember(user, role: role, in: conversation, access: .admin, completion: completion)
    }

    public func removeMember(_ user: UserID, from conversation: ConversationID,
                             completion: @escaping @Sendable (Result<Bool, StoreError>) -> Void) {
        removeMember(user, from: conversation, access: .admin, completion: completion)
    }

    public func append(_ message: NewMessage, to conversation: ConversationID,
                       completion: @escaping @Sendable (Result<AppendOutcome, StoreError>) -> Void) {
        append(message, to: conversation, access: .admin, completion: completion)
    }

    public func edit(messageID: Int64, in conversation: ConversationID, body: String,
                     completion: @escaping @Sendable (Result<Message, StoreError>) -> Void) {
        edit(messageID: messageID, in: conversation, body: body, access: .admin, completion: completion)
    }

    public func delete(messageID: Int64, in conversation: ConversationID,
                       completion: @escaping @Sendable (Result<Message, StoreError>) -> Void) {
        delete(messageID: messageID, in: conversation, access: .admin, completion: completion)
    }

    public func markRead(_ user: UserID, in conversation: ConversationID, upTo messageID: Int64,
                         completion: @escaping @Sendable (Result<ReadState, StoreError>) -> Void) {
        markRead(user, in: conversation, upTo: messageID, access: .admin, completion: completion)
    }

    /// Creates a conversation without members (open mode, admins).
    public func createConversation(id: ConversationID?, title: String?,
                                   completion: @escaping @Sendable (Result<Conversation, StoreError>) -> Void) {
        createConversation(id: id, title: title, owner: nil, completion: completion)
    }

    public func createConversation(id: ConversationID? = nil, title: String? = nil,
                                   owner: UserID? = nil) async throws(StoreError) -> Conversation {
        try await bridge { createConversation(id: id, title: title, owner: owner, completion: $0) }
    }

    @discardableResult
    public func putMember(_ user: UserID, role: MemberRole = .member, in conversation: ConversationID,
                          access: AccessCheck = .admin) async throws(StoreError) -> MemberChange {
        try await bridge { putMember(user, role: role, in: conversation, access: access, completion: $0) }
    }

    public func removeMember(_ user: UserID, from conversation: ConversationID,
                             access: AccessCheck = .admin) async throws(StoreError) -> Bool {
        try await bridge { removeMember(user, from: conversation, access: access, completion: $0) }
    }

    public func append(_ message: NewMessage, to conversation: ConversationID,
                       access: AccessCheck = .admin) async throws(StoreError) -> AppendOutcome {
        try await bridge { append(message, to: conversation, access: access, completion: $0) }
    }

    public func edit(messageID: Int64, in conversation: ConversationID, body: String,
                     access: AccessCheck = .admin) async throws(StoreError) -> Message {
        try await bridge { edit(messageID: messageID, in: conversation, body: body, access: access, completion: $0) }
    }

    public func delete(messageID: Int64, in conversation: ConversationID,
                       access: AccessCheck = .admin) async throws(StoreError) -> Message {
        try await bridge { delete(messageID: messageID, in: conversation, access: access, completion: $0) }
    }

    public func markRead(_ user: UserID, in conversation: ConversationID, upTo messageID: Int64,
                         access: AccessCheck = .admin) async throws(StoreError) -> ReadState {
        try await bridge { markRead(user, in: conversation, upTo: messageID, access: access, completion: $0) }
    }

    /// Waits on the backend feed without a handler; returns how the wait ended.
    public func waitForServerChange(after activity: Int64, timeout: Duration) async -> WaitOutcome {
        await withCheckedContinuation { continuation in
            _ = waitForServerChange(after: activity, timeout: timeout) {
                continuation.resume(returning: $0)
            }
        }
    }

    /// Waits on the user feed without a handler; returns how the wait ended.
    public func waitForInboxChange(of user: UserID, after activity: Int64, timeout: Duration) async -> WaitOutcome {
        await withCheckedContinuation { continuation in
            _ = waitForInboxChange(of: user, after: activity, timeout: timeout) {
                continuation.resume(returning: $0)
            }
        }
    }

    /// A wait for any change of the conversation, whatever message it concerns.
    public func waitForChange(in conversation: ConversationID, after version: Int64, timeout: Duration,
                              handler: @escaping @Sendable (WaitOutcome) -> Void) -> WaitToken {
        waitForChange(in: conversation, after: version, ids: nil, timeout: timeout, handler: handler)
    }

    /// Waits without a handler; returns how the wait ended.
    public func waitForChange(in conversation: ConversationID, after version: Int64, ids: ClosedRange<Int64>? = nil,
                              timeout: Duration) async -> WaitOutcome {
        await withCheckedContinuation { continuation in
            _ = waitForChange(in: conversation, after: version, ids: ids, timeout: timeout) {
                continuation.resume(returning: $0)
            }
        }
    }
}

private func bridge<T: Sendable>(
    _ start: (@escaping @Sendable (Result<T, StoreError>) -> Void) -> Void
) async throws(StoreError) -> T {
    let result: Result<T, StoreError> = await withCheckedContinuation { continuation in
        start { continuation.resume(returning: $0) }
    }
    return try result.get()
}
