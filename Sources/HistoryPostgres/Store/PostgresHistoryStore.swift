import Dispatch
import Foundation
import HistoryStore
import HostResources
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
/// - Waits park here, in `Waiters`, fed twice: by
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
public final class PostgresHistoryStore: StoreFront, @unchecked Sendable {
    private let postgres: PostgresBackend

    /// Connects, brings the schema up to date (several instances starting
    /// at once take turns: `PostgresMigrator`'s advisory lock), starts the
    /// writer and the listener.
    /// - Throws: `.unavailable` when the database cannot be reached,
    ///   `.migration` for a schema this code cannot use, `.invalid` for a
    ///   bad setting.
    public convenience init(configuration: PostgresStoreConfiguration) throws(StoreError) {
        let migrations: [Migration]
        do {
            migrations = try PostgresSchema.migrations()
        } catch {
            throw .migration(reason: "\(error)")
        }
        try self.init(configuration: configuration, migrations: migrations)
    }

    init(configuration: PostgresStoreConfiguration, migrations: [Migration]) throws(StoreError) {
        postgres = try PostgresBackend(configuration: configuration, migrations: migrations)
        super.init(backend: postgres)
    }

    public var configuration: PostgresStoreConfiguration { postgres.configuration }

    /// True while this instance hears the other instances' commits.
    public var isListening: Bool { postgres.listener.isListening }

    /// Statements of pages read together, the pages they read, and the
    /// pages waiting for one now (tests).
    package var pageStatementCounts: (statements: Int, requests: Int, waiting: Int) { postgres.pageStatementCounts }

    /// The listening session's backend pid (tests terminate it).
    package var listenerBackendPID: Int32 { postgres.listener.backendPID }

    // MARK: - Beyond the protocol

    /// Appends many messages in one transaction, bypassing group commit: for
    /// benchmarks and seeding (`history-load seed --direct`). Counters,
    /// versions and ids stay exactly as if they had been appended one by
    /// one, and parked waits on every instance are woken.
    /// - Returns: the ids given (consecutive), or nil for an empty list.
    @discardableResult
    public func bulkAppend(_ messages: [NewMessage], to conversation: ConversationID) throws(StoreError) -> ClosedRange<Int64>? {
        for message in messages { try MessageRules.validate(message) }
        guard !closed else { throw .closed }
        return try postgres.writer.bulkAppend(messages, to: conversation)
    }

}

/// PostgreSQL's primitives for `StoreFront`: pooled read sessions, the
/// group-committing writer on sessions of its own, and the listener that
/// feeds other instances' commits to the wait tables.
final class PostgresBackend: StoreEngine {
    let configuration: PostgresStoreConfiguration
    private let readers: PostgresConnectionPool
    private let writerPool: PostgresConnectionPool
    let writer: PostgresWriter
    let listener: PostgresChangeListener
    let waiters: Waiters
    /// Typing: this instance's accepted calls go out through `typingRelay`,
    /// the other instances' come in through the listener.
    let typing: TypingBoard
    private let typingRelay: PostgresTypingRelay
    /// Newest and `before` pages and conversations asked at the same time, read together.
    private let pages: ReadBatcher<PostgresPageBatch.Request, PostgresPageBatch.Rows, StoreError>
    /// Set by `finishWrites`: a read then fails `.closed` rather than retry.
    private let isClosed = Atomic<Bool>(false)

    init(configuration: PostgresStoreConfiguration, migrations: [Migration]) throws(StoreError) {
        guard configuration.readerCount >= 1 else {
            throw .invalidSetting("readerCount", reason: "must be at least 1")
        }
        if let pageStatements = configuration.pageStatements, !(1...configuration.readerCount).contains(pageStatements) {
            throw .invalidSetting("pageStatements", reason: "must be between 1 and readerCount")
        }
        guard configuration.maximumBatchSize >= 1 else {
            throw .invalidSetting("maximumBatchSize", reason: "must be at least 1")
        }
        let migrator: PostgresMigrator
        do {
            migrator = try PostgresMigrator(migrations: migrations)
        } catch {
            throw StoreError(migration: error)
        }
        // Every read is a prepared keyset walk whose generic plan is the
        // right one (PostgresReadsTests check those plans). Left to itself,
        // PostgreSQL kept planning them afresh at every execution (a custom
        // plan looked cheaper than the generic estimate), and planning was
        // most of its CPU per deep page.
        let readers = PostgresConnectionPool(uri: configuration.uri, maximumConnections: configuration.readerCount,
                                             applicationName: configuration.applicationName,
                                             sessionOptions: "-c plan_cache_mode=force_generic_plan")
        let migrated: Result<[Int], PostgresMigrationError>
        do {
            migrated = try readers.withConnection { connection throws(PostgresError) in
                let migrated = Result { () throws(PostgresMigrationError) in try migrator.migrate(connection) }
                if case .success = migrated { try PostgresStoredJSONFill.run(connection) }
                return migrated
            }
        } catch {
            readers.close()
            throw StoreError(postgres: error)
        }
        if case .failure(let error) = migrated {
            readers.close()
            throw StoreError(migration: error)
        }
        let waiters = Waiters()
        let typing = TypingBoard()
        let onWarning = configuration.onWarning
        let typingRelay = PostgresTypingRelay(uri: configuration.uri, applicationName: configuration.applicationName) { error in
            onWarning?("PostgreSQL: typing calls not relayed to the other instances: \(error.message)")
        }
        typing.relay(to: typingRelay.send)
        let origin = typingRelay.origin
        // The writer's sessions are its own, so reads never wait behind a
        // batch and a batch never waits behind reads. Generic plans, as the
        // readers': left to itself PostgreSQL planned a run of appends
        // afresh at every batch (its generic estimate counts 1,000 rows in
        // `generate_series(1, $1)`), about 300 µs a batch
        // (docs/performance.md, "Appends on PostgreSQL planned once").
        let writerPool = PostgresConnectionPool(uri: configuration.uri, maximumConnections: 2,
                                                applicationName: configuration.applicationName + " writer",
                                                sessionOptions: "-c plan_cache_mode=force_generic_plan")
        let onBatchCommitted = configuration.onBatchCommitted
        let writer = PostgresWriter(pool: writerPool, maximumBatchSize: configuration.maximumBatchSize) { commit in
            Self.publish(commit.notices, to: waiters, typing, origin: origin)
            onBatchCommitted?(commit.size)
        }
        let listener = PostgresChangeListener(
            uri: configuration.uri,
            onNotices: { notices in Self.publish(notices, to: waiters, typing, origin: origin) },
            onGap: {
                onWarning?("PostgreSQL: listening again for other instances' commits; waking every parked long-poll")
                waiters.wakeAll()
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
            typingRelay.close()
            writer.close()
            writerPool.close()
            readers.close()
            throw StoreError(postgres: error)
        }
        self.configuration = configuration
        pages = ReadBatcher(maximumRunning: configuration.pageStatements
                                ?? Self.defaultPageStatements(readers: configuration.readerCount,
                                                              processors: AvailableProcessors.count),
                            maximumBatch: Self.pagesPerStatement)
        self.readers = readers
        self.writerPool = writerPool
        self.writer = writer
        self.listener = listener
        self.waiters = waiters
        self.typing = typing
        self.typingRelay = typingRelay
    }

    /// Wakes the waits a commit concerns and hears the other instances'
    /// typing; the same code for this instance's commits and for those
    /// heard from others.
    static func publish(_ notices: [ChangeNotice], to waiters: Waiters, _ typing: TypingBoard, origin: String) {
        var changes: [CommittedChange] = []
        for notice in notices {
            switch notice {
            case .conversation(let id, let version, let changedIDs):
                changes.append(.version(id, version, changed: changedIDs.map { ChangedMessageIDs(ranges: $0) }))
            case .inbox(let activity, let conversations, let users):
                changes.append(.activity(activity, conversations: Set(conversations), users: Set(users)))
            case .typing(let change, let from):
                // This instance applied its own calls when they were made.
                if from != origin { typing.hear(change) }
            }
        }
        if !changes.isEmpty { waiters.publish(changes) }
    }

    // MARK: - Typing

    /// Gathered with the other calls of a tick and decided by one
    /// statement on the typing relay's session, not a reader's: typing
    /// takes neither a reader nor a read-pool thread from the pages.
    func decideTypingAccess(_ access: AccessCheck, to conversation: ConversationID,
                            _ decided: @escaping @Sendable (StoreError?) -> Void) {
        typingRelay.decide(access, to: conversation, decided)
    }

    var decidesTypingAccessLater: Bool { true }

    // MARK: - Health

    /// `SELECT 1` on a pooled session (a broken one is replaced first):
    /// `.unavailable` while the server is down, fine again as soon as it is
    /// back. Bounded by the connect timeout when nothing answers.
    func ping() throws(StoreError) {
        try withReader { connection throws(StoreError) in
            try postgres { () throws(PostgresError) in _ = try connection.execute(sql: "SELECT 1") }
        }
    }


    // MARK: - Lifecycle

    func finishWrites() {
        isClosed.store(true, ordering: .releasing)
        writer.close()
    }

    /// Stops listening, then closes every session.
    func close() {
        pages.close()
        listener.close()
        typingRelay.close()
        writerPool.close()
        readers.close()
    }

    // MARK: - Private

    func submit(_ request: WriteRequest) {
        writer.submit(request)
    }

    /// A quarter of the reading sessions, at most one per core: on two
    /// cores two statements at a time served the most deep pages, with 8
    /// reading sessions and with 16 (one: less of PostgreSQL's CPU per
    /// page, fewer pages; four, with 16 sessions: batches too small to
    /// pay for their hand-offs, no better than reading each page alone;
    /// docs/performance.md, "Pages read together on PostgreSQL").
    static func defaultPageStatements(readers: Int, processors: Int) -> Int {
        max(1, min(readers / 4, processors))
    }

    /// The most pages one statement reads: past 8 a page's share of the
    /// executor's start no longer shrinks much (docs/performance.md,
    /// "Pages read together on PostgreSQL"), and the statement's time, which
    /// each of its pages waits, keeps growing.
    static let pagesPerStatement = 16

    /// Newest and `before` pages through `pages`, the others alone.
    func page(of conversation: ConversationID, _ query: PageQuery, access: AccessCheck) throws(StoreError) -> Page {
        guard let request = PostgresPageBatch.Request(conversation, query, access: access) else {
            return try read { reads throws(StoreError) in try reads.page(of: conversation, query, access: access) }
        }
        return try decodedPage(request, from: pages.read(request, pageStatement))
    }

    /// As `page` above, with no thread blocked while a newest or `before`
    /// page waits for its statement (`ReadBatcher.read(_:_:answer:)`):
    /// `completion` runs on the thread that ran it.
    func page(of conversation: ConversationID, _ query: PageQuery, access: AccessCheck,
              completion: @escaping @Sendable (Result<Page, StoreError>) -> Void) {
        guard let request = PostgresPageBatch.Request(conversation, query, access: access) else {
            do throws(StoreError) {
                completion(.success(try page(of: conversation, query, access: access)))
            } catch {
                completion(.failure(error))
            }
            return
        }
        pages.read(request, pageStatement) { [self] outcome in
            do throws(StoreError) {
                completion(.success(try decodedPage(request, from: outcome)))
            } catch {
                completion(.failure(error))
            }
        }
    }

    var readsPagesLater: Bool { true }

    /// The request's page in its statement's rows; read again alone, whole,
    /// when a row had no stored JSON (`PostgresPageRows`).
    private func decodedPage(_ request: PostgresPageBatch.Request,
                             from outcome: ReadBatcher<PostgresPageBatch.Request, PostgresPageBatch.Rows, StoreError>.Outcome)
        throws(StoreError) -> Page {
        let (rows, index) = try outcome.get()
        if let page = try PostgresPageBatch.page(index, of: rows, request) { return page }
        return try withReader { connection throws(StoreError) in
            try PostgresReads(connection: connection).wholeDescendingPage(of: request.conversation, below: request.below,
                                                                          limit: request.limit, access: request.access)
        }
    }

    /// The conversation through `pages` too, as a page of no rows.
    func conversation(_ id: ConversationID, access: AccessCheck) throws(StoreError) -> Conversation {
        let request = PostgresPageBatch.Request(conversation: id, access: access)
        let (rows, index) = try pages.read(request, pageStatement).get()
        return try PostgresPageBatch.conversation(index, of: rows, request)
    }

    /// One statement for the requests `pages` gathered.
    private var pageStatement: ReadBatcher<PostgresPageBatch.Request, PostgresPageBatch.Rows, StoreError>.Statement {
        { [self] (requests: [PostgresPageBatch.Request]) throws(StoreError) -> PostgresPageBatch.Rows in
            try readPages(requests)
        }
    }

    private func readPages(_ requests: [PostgresPageBatch.Request]) throws(StoreError) -> PostgresPageBatch.Rows {
        let rows = try withReader { connection throws(StoreError) in try PostgresPageBatch.read(requests, on: connection) }
        configuration.onPageStatement?(requests.count)
        return rows
    }

    /// Statements of pages read together, the pages they read, and the
    /// pages waiting for one now (tests).
    var pageStatementCounts: (statements: Int, requests: Int, waiting: Int) {
        let counts = pages.counts
        return (counts.statements, counts.requests, pages.waitingCount)
    }

    /// One read on a pooled session; the read takes its own snapshot.
    func read<T>(_ body: (any SnapshotReads) throws(StoreError) -> T) throws(StoreError) -> T {
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
