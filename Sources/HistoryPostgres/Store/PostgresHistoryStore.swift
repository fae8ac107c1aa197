import Dispatch
import HistoryStore
import Synchronization

/// The `HistoryStore` on a PostgreSQL database that any number of
/// `history-server` instances share: the same contract as
/// `SQLiteHistoryStore`, byte for byte, and every guarantee across
/// instances.
///
/// - Writes go through one group-committing `PostgresWriter` per instance;
///   ids and versions follow commit order across instances because each
///   transaction takes its conversation's row lock before it numbers
///   anything (docs/architecture.md, "PostgreSQL and several instances").
/// - Reads borrow a session from a pool; each read takes its own snapshot.
/// - Waits park here, in `VersionWaiters` and `InboxWaiters`, fed twice: by
///   this instance's own commits as soon as they are answered (no round
///   trip), and by `PostgresChangeListener`, which hears every instance's
///   commits through `LISTEN`/`NOTIFY`. A notice heard twice wakes nothing
///   twice: a wait ends at the first version above its own.
/// - When the listening connection was lost, notices may have been missed:
///   once it listens again, every parked wait is woken to read again.
///
/// ```swift
/// let store = try PostgresHistoryStore(configuration: PostgresStoreConfiguration(uri: "postgresql:///history"))
/// let outcome = try await store.append(NewMessage(sender: "ana", body: "hi"), to: ConversationID("general")!)
/// store.close()
/// ```
public final class PostgresHistoryStore: HistoryStore {
    public let configuration: PostgresStoreConfiguration
    private let readers: PostgresConnectionPool
    private let writerPool: PostgresConnectionPool
    private let writer: PostgresWriter
    private let listener: PostgresChangeListener
    private let waiters: VersionWaiters
    private let inboxWaiters: InboxWaiters
    private let isClosed = Atomic<Bool>(false)

    /// Connects, brings the schema up to date (several instances starting
    /// at once take turns: `PostgresMigrator`'s advisory lock), starts the
    /// writer and the listener.
    /// - Throws: `.unavailable` when the database cannot be reached,
    ///   `.migration` for a schema this code cannot use, `.invalid` for a
    ///   bad setting.
    public convenience init(configuration: PostgresStoreConfiguration) throws(StoreError) {
        let migrations: [PostgresMigration]
        do {
            migrations = try PostgresMigration.bundled()
        } catch {
            throw .migration(reason: "\(error)")
        }
        try self.init(configuration: configuration, migrations: migrations)
    }

    init(configuration: PostgresStoreConfiguration, migrations: [PostgresMigration]) throws(StoreError) {
        guard configuration.readerCount >= 1 else {
            throw .invalid(field: "readerCount", reason: "must be at least 1")
        }
        guard configuration.maximumBatchSize >= 1 else {
            throw .invalid(field: "maximumBatchSize", reason: "must be at least 1")
        }
        let migrator: PostgresMigrator
        do {
            migrator = try PostgresMigrator(migrations: migrations)
        } catch {
            throw StoreError(migration: error)
        }
        let readers = PostgresConnectionPool(uri: configuration.uri, maximumConnections: configuration.readerCount,
                                             applicationName: configuration.applicationName)
        let migrated: Result<[Int], PostgresMigrationError>
        do {
            migrated = try readers.withConnection { connection throws(PostgresError) in
                Result { () throws(PostgresMigrationError) in try migrator.migrate(connection) }
            }
        } catch {
            readers.close()
            throw StoreError(postgres: error)
        }
        if case .failure(let error) = migrated {
            readers.close()
            throw StoreError(migration: error)
        }
        let waiters = VersionWaiters()
        let inboxWaiters = InboxWaiters()
        // The writer's sessions are its own, so reads never wait behind a
        // batch and a batch never waits behind reads.
        let writerPool = PostgresConnectionPool(uri: configuration.uri, maximumConnections: 2,
                                                applicationName: configuration.applicationName + " writer")
        let onBatchCommitted = configuration.onBatchCommitted
        let writer = PostgresWriter(pool: writerPool, maximumBatchSize: configuration.maximumBatchSize) { commit in
            Self.publish(commit.notices, to: waiters, inboxWaiters)
            onBatchCommitted?(commit.size)
        }
        let onWarning = configuration.onWarning
        let listener = PostgresChangeListener(
            uri: configuration.uri,
            onNotices: { notices in Self.publish(notices, to: waiters, inboxWaiters) },
            onGap: {
                onWarning?("PostgreSQL: listening again for other instances' commits; waking every parked long-poll")
                waiters.wakeAll()
                inboxWaiters.wakeAll()
            },
            onConnectionLost: { error, failedReconnects in
                // The loss, then one line per ten failed reconnects (every
                // 2 s at most): enough to follow an outage, not a flood.
                guard failedReconnects % 10 == 0 else { return }
                let reason = error.message.split(whereSeparator: \.isNewline)
                    .map { $0.trimmingPrefix(while: \.isWhitespace) }.joined(separator: " ")
                onWarning?(failedReconnects == 0
                    ? "PostgreSQL: the connection listening for other instances' commits is down: \(reason)"
                    : "PostgreSQL: still reconnecting (\(failedReconnects) attempts): \(reason)")
            })
        do {
            try listener.start()
        } catch {
            listener.close()
            writer.close()
            writerPool.close()
            readers.close()
            throw StoreError(postgres: error)
        }
        self.configuration = configuration
        self.readers = readers
        self.writerPool = writerPool
        self.writer = writer
        self.listener = listener
        self.waiters = waiters
        self.inboxWaiters = inboxWaiters
    }

    /// Wakes the waits a commit concerns; the same code for this instance's
    /// commits and for those heard from others.
    static func publish(_ notices: [ChangeNotice], to waiters: VersionWaiters, _ inboxWaiters: InboxWaiters) {
        for notice in notices {
            switch notice {
            case .conversation(let id, let version, let changedIDs):
                waiters.publish(conversation: id, version: version,
                                changed: changedIDs.map { ChangedMessageIDs(ranges: $0) })
            case .inbox(let activity, let conversations, let users):
                inboxWaiters.publish(activity: activity, conversations: Set(conversations), users: Set(users))
            }
        }
    }

    // MARK: - Conversations

    public func createConversation(id: ConversationID?, title: String?, owner: UserID?,
                                   completion: @escaping @Sendable (Result<Conversation, StoreError>) -> Void) {
        do {
            try MessageRules.validateTitle(title)
        } catch {
            completion(.failure(error))
            return
        }
        submit(.createConversation(id: id, title: title, owner: owner, completion: completion))
    }

    public func conversation(_ id: ConversationID) throws(StoreError) -> Conversation {
        try read { reads throws(StoreError) in try reads.conversation(id).conversation }
    }

    // MARK: - Members

    public func putMember(_ user: UserID, role: MemberRole, in conversation: ConversationID,
                          completion: @escaping @Sendable (Result<MemberChange, StoreError>) -> Void) {
        submit(.putMember(user, role: role, conversation: conversation, completion: completion))
    }

    public func removeMember(_ user: UserID, from conversation: ConversationID,
                             completion: @escaping @Sendable (Result<Bool, StoreError>) -> Void) {
        submit(.removeMember(user, conversation: conversation, completion: completion))
    }

    public func members(of conversation: ConversationID, after: UserID?, limit: Int) throws(StoreError) -> MemberPage {
        guard MemberPage.limitRange.contains(limit) else {
            throw .invalid(field: "limit", reason: "must be an integer from \(MemberPage.limitRange.lowerBound) to \(MemberPage.limitRange.upperBound)")
        }
        return try read { reads throws(StoreError) in try reads.members(of: conversation, after: after, limit: limit) }
    }

    public func role(of user: UserID, in conversation: ConversationID) throws(StoreError) -> MemberRole? {
        try read { reads throws(StoreError) in try reads.role(of: user, in: conversation) }
    }

    // MARK: - Messages

    public func append(_ message: NewMessage, to conversation: ConversationID,
                       completion: @escaping @Sendable (Result<AppendOutcome, StoreError>) -> Void) {
        do {
            try MessageRules.validate(message)
        } catch {
            completion(.failure(error))
            return
        }
        submit(.append(message, conversation: conversation, completion: completion))
    }

    public func edit(messageID: Int64, in conversation: ConversationID, body: String,
                     completion: @escaping @Sendable (Result<Message, StoreError>) -> Void) {
        do {
            try MessageRules.validateBody(body)
        } catch {
            completion(.failure(error))
            return
        }
        guard messageID >= 1 else {
            completion(.failure(.messageNotFound(conversation, messageID: messageID)))
            return
        }
        submit(.edit(messageID: messageID, conversation: conversation, body: body, completion: completion))
    }

    public func delete(messageID: Int64, in conversation: ConversationID,
                       completion: @escaping @Sendable (Result<Message, StoreError>) -> Void) {
        guard messageID >= 1 else {
            completion(.failure(.messageNotFound(conversation, messageID: messageID)))
            return
        }
        submit(.delete(messageID: messageID, conversation: conversation, completion: completion))
    }

    public func message(_ messageID: Int64, in conversation: ConversationID) throws(StoreError) -> Message {
        try read { reads throws(StoreError) in try reads.message(messageID, in: conversation) }
    }

    // MARK: - Reads

    public func page(of conversation: ConversationID, _ query: PageQuery) throws(StoreError) -> Page {
        try query.validate()
        return try read { reads throws(StoreError) in try reads.page(of: conversation, query) }
    }

    public func changes(in conversation: ConversationID, _ query: ChangeQuery) throws(StoreError) -> ChangeFeed {
        try query.validate()
        return try read { reads throws(StoreError) in try reads.changes(in: conversation, query) }
    }

    // MARK: - Inbox

    public func markRead(_ user: UserID, in conversation: ConversationID, upTo messageID: Int64,
                         completion: @escaping @Sendable (Result<ReadState, StoreError>) -> Void) {
        do throws(RuleViolation) {
            try ReadState.lastReadIDRule.check(messageID)
        } catch {
            completion(.failure(StoreError(error)))
            return
        }
        submit(.markRead(user, conversation: conversation, upTo: messageID, completion: completion))
    }

    public func inbox(of user: UserID, _ query: InboxQuery) throws(StoreError) -> InboxPage {
        try query.validate()
        let cursor = try query.decodedCursor()
        return try read { reads throws(StoreError) in try reads.inbox(of: user, limit: query.limit, after: cursor) }
    }

    public func inboxChanges(of user: UserID, _ query: InboxChangeQuery) throws(StoreError) -> InboxChangeFeed {
        try query.validate()
        return try read { reads throws(StoreError) in try reads.inboxChanges(of: user, query) }
    }

    // MARK: - Wake-ups

    public func waitForChange(in conversation: ConversationID, after version: Int64, ids: ClosedRange<Int64>?,
                              timeout: Duration, handler: @escaping @Sendable (WaitOutcome) -> Void) -> WaitToken {
        waiters.wait(conversation: conversation, after: version, ids: ids, timeout: timeout,
                     currentVersion: { try? self.conversation(conversation).version },
                     handler: handler)
    }

    public func waitForInboxChange(of user: UserID, after activity: Int64, timeout: Duration,
                                   handler: @escaping @Sendable (WaitOutcome) -> Void) -> WaitToken {
        inboxWaiters.wait(
            user: user, after: activity, timeout: timeout,
            memberships: {
                try? self.read { reads throws(StoreError) in
                    try reads.membershipSeqs(of: user, limit: InboxWaiters.membershipCap + 1)
                }
            },
            hasChanges: { try? self.read { reads throws(StoreError) in try reads.hasInboxChanges(of: user, after: activity) } },
            handler: handler)
    }

    public func observeUserChanges(_ handler: @escaping @Sendable (Set<UserID>?) -> Void) {
        inboxWaiters.observeUserChanges(handler)
    }

    public func cancelWait(_ token: WaitToken) {
        if InboxWaiters.owns(token) {
            inboxWaiters.cancel(token)
        } else {
            waiters.cancel(token)
        }
    }

    public var parkedWaitCount: Int {
        waiters.parkedCount + inboxWaiters.parkedCount
    }

    // MARK: - Health

    /// `SELECT 1` on a pooled session (a broken one is replaced first):
    /// `.unavailable` while the server is down, fine again as soon as it is
    /// back. Bounded by the connect timeout when nothing answers.
    public func ping() throws(StoreError) {
        try withReader { connection throws(StoreError) in
            try postgres { () throws(PostgresError) in _ = try connection.execute(sql: "SELECT 1") }
        }
    }

    /// True while this instance hears the other instances' commits.
    public var isListening: Bool { listener.isListening }

    /// The listening session's backend pid (tests terminate it).
    package var listenerBackendPID: Int32 { listener.backendPID }

    // MARK: - Beyond the protocol

    /// Appends many messages in one transaction, bypassing group commit: for
    /// benchmarks and seeding (`history-load seed --direct`). Counters,
    /// versions and ids stay exactly as if they had been appended one by
    /// one, and parked waits on every instance are woken.
    /// - Returns: the ids given (consecutive), or nil for an empty list.
    @discardableResult
    public func bulkAppend(_ messages: [NewMessage], to conversation: ConversationID) throws(StoreError) -> ClosedRange<Int64>? {
        for message in messages { try MessageRules.validate(message) }
        guard !isClosed.load(ordering: .acquiring) else { throw .closed }
        return try writer.bulkAppend(messages, to: conversation)
    }

    // MARK: - Lifecycle

    /// Refuses new work, writes and answers what is queued, answers parked
    /// waits `.closing`, stops listening, then closes every session.
    /// Idempotent.
    public func close() {
        guard !isClosed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        writer.close()
        waiters.close()
        inboxWaiters.close()
        listener.close()
        writerPool.close()
        readers.close()
    }

    deinit {
        close()
    }

    // MARK: - Private

    private func submit(_ request: WriteRequest) {
        guard !isClosed.load(ordering: .acquiring) else {
            request.fail(.closed)
            return
        }
        writer.submit(request)
    }

    /// One read on a pooled session; the read takes its own snapshot.
    private func read<T>(_ body: (PostgresReads) throws(StoreError) -> T) throws(StoreError) -> T {
        try withReader { connection throws(StoreError) in try body(PostgresReads(connection: connection)) }
    }

    /// Runs `body` on a pooled session. A session found broken (the server
    /// restarted since it was last used) is dropped and the read tried
    /// again on another, since a read changes nothing: one restart costs
    /// no request an error, only sessions opened afresh. At most as many
    /// tries as the pool holds sessions, plus one that opens a new one.
    private func withReader<T>(_ body: (PGConnection) throws(StoreError) -> T) throws(StoreError) -> T {
        guard !isClosed.load(ordering: .acquiring) else { throw .closed }
        var attempts = 0
        while true {
            attempts += 1
            let outcome: ReadOutcome<T>
            do throws(PostgresError) {
                outcome = try readers.withConnection { connection throws(PostgresError) -> ReadOutcome<T> in
                    do throws(StoreError) {
                        return .value(try body(connection))
                    } catch {
                        return .failed(error, connectionBroken: connection.isBroken)
                    }
                }
            } catch {
                if isClosed.load(ordering: .acquiring) { throw .closed }
                throw StoreError(postgres: error)
            }
            switch outcome {
            case .value(let value):
                return value
            case .failed(let error, let connectionBroken):
                guard connectionBroken else { throw error }
                if isClosed.load(ordering: .acquiring) { throw .closed }
                guard attempts <= readers.maximumConnections else {
                    if case .unavailable = error { throw error }
                    throw .unavailable(reason: "the connection was lost: \(error)")
                }
            }
        }
    }
}

private enum ReadOutcome<T> {
    case value(T)
    case failed(StoreError, connectionBroken: Bool)
}
