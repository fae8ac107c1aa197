import CSQLite
import Foundation
import Synchronization

/// The `HistoryStore` on one SQLite file: a group-committing writer, a pool
/// of readers over WAL, and parked waits woken by commits.
///
/// Opening creates the folder and the file when missing, readable by their
/// owner only (`PrivateFiles`), switches to WAL, sets durability, applies
/// the missing migrations (refusing a newer or tampered schema, and a schema
/// with anything the migrations did not create) and opens the readers.
///
/// ```swift
/// let store = try SQLiteHistoryStore(configuration: StoreConfiguration(path: "data/history.sqlite"))
/// let general = try await store.createConversation(id: ConversationID("general"))
/// let outcome = try await store.append(NewMessage(sender: "ana", body: "hi"), to: general.id)
/// let page = try store.page(of: general.id, PageQuery())
/// store.close()
/// ```
///
/// Related SQLite documentation: <https://www.sqlite.org/wal.html>
public final class SQLiteHistoryStore: HistoryStore {
    public let configuration: StoreConfiguration
    private let writer: Writer
    private let readers: ReaderPool
    private let batcher: AppendBatcher
    private let waiters: VersionWaiters
    private let inboxWaiters: InboxWaiters
    private let seqCache = ConversationSeqCache()
    private let largeInboxes = LargeInboxes()
    private let isClosed = Atomic<Bool>(false)

    /// Opens (creating when missing) the store at `configuration.path` with
    /// the migrations embedded from `migrations/`.
    /// - Throws: `.migration` for a newer or tampered schema or one holding
    ///   objects no migration creates, `.storage` when
    ///   SQLite cannot open or configure the file, `.invalid` for a bad setting.
    public convenience init(configuration: StoreConfiguration) throws(StoreError) {
        try self.init(configuration: configuration, migrations: Migration.bundled())
    }

    /// Opens with an explicit migration list (tests of the migrator).
    init(configuration: StoreConfiguration, migrations: [Migration]) throws(StoreError) {
        guard configuration.readerCount >= 1 else {
            throw .invalid(field: "readerCount", reason: "must be at least 1")
        }
        guard configuration.maximumBatchSize >= 1 else {
            throw .invalid(field: "maximumBatchSize", reason: "must be at least 1")
        }
        guard configuration.walSizeLimitBytes >= 0 else {
            throw .invalid(field: "walSizeLimitBytes", reason: "must be at least 0")
        }
        let migrator = try Migrator(migrations: migrations)
        let madePrivate = try PrivateFiles.prepare(databasePath: configuration.path)
        for line in madePrivate { configuration.onWarning?(line) }

        let connection = try sqlite { () throws(SQLiteError) in try Connection(path: configuration.path) }
        try sqlite { () throws(SQLiteError) in
            try connection.setBusyTimeout(milliseconds: configuration.busyTimeoutMilliseconds)
            // Page size can only change before the first table exists, and
            // not at all in WAL mode: set it for a new file, before WAL.
            // 8 KiB rather than 4 KiB: 4 KiB pages made appends cheaper (each
            // commit writes half the bytes per touched page) but deep pages
            // dearer (a page of 50 messages spans more leaves), and reading
            // pages is what this store is for (docs/performance.md, "Page
            // size: 8 KiB").
            if try connection.scalarInt64(sql: "PRAGMA page_count") == 0 {
                try connection.execute(sql: "PRAGMA page_size = 8192")
            }
            let mode = try connection.scalarText(sql: "PRAGMA journal_mode = WAL")
            guard mode?.lowercased() == "wal" else {
                throw SQLiteError(code: SQLITE_ERROR, message: "cannot use WAL (journal_mode stays \(mode ?? "unknown"))")
            }
            // In WAL mode FULL syncs the WAL at every commit: an answered
            // write survives power loss. NORMAL syncs only at checkpoints.
            let synchronous = configuration.durability == .full ? "FULL" : "NORMAL"
            try connection.execute(sql: "PRAGMA synchronous = \(synchronous)")
            try connection.execute(sql: "PRAGMA journal_size_limit = \(configuration.walSizeLimitBytes)")
            try connection.execute(sql: "PRAGMA foreign_keys = ON")
            // A deleted or edited message's old text is overwritten with
            // zeros where it lay instead of left in free space: a tombstone
            // erases the content from the file (at the next checkpoint),
            // whatever default the SQLite build has (Debian's is on, others'
            // off).
            try connection.execute(sql: "PRAGMA secure_delete = ON")
        }
        try migrator.migrate(connection)
        let writer = try Writer(connection: connection)

        var readerConnections: [Connection] = []
        for _ in 0..<configuration.readerCount {
            readerConnections.append(try Self.openReader(configuration))
        }
        self.configuration = configuration
        self.writer = writer
        self.readers = ReaderPool(connections: readerConnections)
        self.waiters = VersionWaiters()
        // Every commit that changes an inbox publishes its activity to the
        // inbox waits once readers see it (`AppendBatcher`, `bulkAppend`):
        // waits parked at the last published activity need not look first.
        self.inboxWaiters = InboxWaiters(publishedActivity: writer.activity)
        self.batcher = AppendBatcher(writer: writer, waiters: waiters, inboxWaiters: inboxWaiters,
                                     maximumBatchSize: configuration.maximumBatchSize,
                                     onBatchCommitted: configuration.onBatchCommitted)
    }

    /// How much of the file each reader maps (see `openReader`).
    static let readerMemoryMapBytes = 1 << 30

    static func openReader(_ configuration: StoreConfiguration) throws(StoreError) -> Connection {
        try sqlite { () throws(SQLiteError) in
            let reader = try Connection(path: configuration.path,
                                        vfs: configuration.prefetchesPages ? PrefetchingVFS.name : nil)
            try reader.setBusyTimeout(milliseconds: configuration.busyTimeoutMilliseconds)
            // Readers never write: refuse it, so a bug cannot bypass the writer.
            try reader.execute(sql: "PRAGMA query_only = 1")
            // Reads of the main file through a memory map: a page that is in
            // the OS cache but not in this connection's small page cache costs
            // a page-table lookup instead of a pread and an 8 KiB copy, so a
            // deep page costs close to what the (always cached) newest page
            // costs (guarantee 4; what is left is CPU cache misses on a cold
            // leaf, which `PrefetchingVFS` overlaps, not the TLB:
            // docs/performance.md, "Readers through a memory map"). The map is address space,
            // not memory; pages in the WAL are still read normally. SQLite
            // caps it at its compile-time maximum (2 GiB on Debian's build).
            try reader.execute(sql: "PRAGMA mmap_size = \(readerMemoryMapBytes)")
            return reader
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
        batcher.submit(.createConversation(id: id, title: title, owner: owner, completion: completion))
    }

    public func conversation(_ id: ConversationID) throws(StoreError) -> Conversation {
        try read { reads throws(StoreError) in try reads.conversation(id).conversation }
    }

    // MARK: - Members

    public func putMember(_ user: UserID, role: MemberRole, in conversation: ConversationID,
                          completion: @escaping @Sendable (Result<MemberChange, StoreError>) -> Void) {
        batcher.submit(.putMember(user, role: role, conversation: conversation, completion: completion))
    }

    public func removeMember(_ user: UserID, from conversation: ConversationID,
                             completion: @escaping @Sendable (Result<Bool, StoreError>) -> Void) {
        batcher.submit(.removeMember(user, conversation: conversation, completion: completion))
    }

    public func members(of conversation: ConversationID, after: UserID?, limit: Int) throws(StoreError) -> MemberPage {
        guard MemberPage.limitRange.contains(limit) else {
            throw .invalid(field: "limit", reason: "must be an integer from \(MemberPage.limitRange.lowerBound) to \(MemberPage.limitRange.upperBound)")
        }
        return try read { reads throws(StoreError) in try reads.members(of: conversation, after: after, limit: limit) }
    }

    /// On the path of every request in tokens mode, so no read transaction
    /// around its single statement (see `StoreReads.role`).
    public func role(of user: UserID, in conversation: ConversationID) throws(StoreError) -> MemberRole? {
        guard !isClosed.load(ordering: .acquiring) else { throw .closed }
        return try readers.read { connection throws(StoreError) -> MemberRole? in
            try StoreReads(connection: connection, seqCache: seqCache, largeInboxes: largeInboxes).role(of: user, in: conversation)
        }
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
        batcher.submit(.append(message, conversation: conversation, completion: completion))
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
        batcher.submit(.edit(messageID: messageID, conversation: conversation, body: body, completion: completion))
    }

    public func delete(messageID: Int64, in conversation: ConversationID,
                       completion: @escaping @Sendable (Result<Message, StoreError>) -> Void) {
        guard messageID >= 1 else {
            completion(.failure(.messageNotFound(conversation, messageID: messageID)))
            return
        }
        batcher.submit(.delete(messageID: messageID, conversation: conversation, completion: completion))
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
        batcher.submit(.markRead(user, conversation: conversation, upTo: messageID, completion: completion))
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

    /// One read transaction on a pooled reader: a single snapshot.
    private func read<T>(_ body: (StoreReads) throws(StoreError) -> T) throws(StoreError) -> T {
        guard !isClosed.load(ordering: .acquiring) else { throw .closed }
        return try readers.read { connection throws(StoreError) -> T in
            try connection.transaction(.deferred, mapError: StoreError.init) { () throws(StoreError) -> T in
                try body(StoreReads(connection: connection, seqCache: seqCache, largeInboxes: largeInboxes))
            }
        }
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

    /// Either kind of wait: inbox tokens carry their own mark.
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

    // MARK: - Beyond the protocol

    /// Appends many messages in one transaction, bypassing group commit: for
    /// benchmarks and seeding (`history-load seed --direct`). Counters,
    /// versions and ids stay exactly as if they had been appended one by one.
    /// - Returns: the ids given (consecutive), or nil for an empty list.
    /// - Throws: `.invalid` (nothing stored), `.conversationNotFound`,
    ///   `.clientIDConflict` for a `client_id` used before or twice,
    ///   `.replyTargetNotFound`, `.storage`, `.closed`.
    @discardableResult
    public func bulkAppend(_ messages: [NewMessage], to conversation: ConversationID) throws(StoreError) -> ClosedRange<Int64>? {
        for message in messages { try MessageRules.validate(message) }
        guard !isClosed.load(ordering: .acquiring) else { throw .closed }
        let result = Result { () throws(StoreError) in
            try writer.sync { () -> Result<(ids: ClosedRange<Int64>, seq: Int64, version: Int64, activity: Int64)?, StoreError> in
                Result { () throws(StoreError) in try writer.bulkAppend(messages, to: conversation) }
            }.get()
        }
        guard let loaded = try result.get() else { return nil }
        waiters.publish(conversation: conversation, version: loaded.version, changed: ChangedMessageIDs(range: loaded.ids))
        inboxWaiters.publish(activity: loaded.activity, conversations: [loaded.seq], users: [])
        return loaded.ids
    }

    /// Runs `body` with the writer's connection on the writer queue (tests
    /// that force storage failures; nothing in the store calls it).
    func withWriterConnection<T>(_ body: (Connection) -> T) -> T {
        writer.withConnection(body)
    }

    /// Runs `body` with one of the readers' connections (tests of how
    /// every connection is configured; nothing in the store calls it).
    func withReaderConnection<T>(_ body: (Connection) -> T) throws(StoreError) -> T {
        guard !isClosed.load(ordering: .acquiring) else { throw .closed }
        return try readers.read { connection throws(StoreError) -> T in body(connection) }
    }

    /// `PRAGMA integrity_check`: `["ok"]` for a sound file, else SQLite's findings.
    public func checkIntegrity() throws(StoreError) -> [String] {
        guard !isClosed.load(ordering: .acquiring) else { throw .closed }
        return try readers.read { connection throws(StoreError) -> [String] in
            try sqlite { () throws(SQLiteError) in
                try connection.makeStatement(sql: "PRAGMA integrity_check").rows { $0.string(0) }
            }
        }
    }

    // MARK: - Lifecycle

    /// Refuses new work, writes and answers what is queued, answers parked
    /// waits `.closing`, then closes every connection. Idempotent.
    public func close() {
        guard !isClosed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        batcher.close()
        waiters.close()
        inboxWaiters.close()
        readers.close()
        writer.close()
    }

    deinit {
        close()
    }
}
