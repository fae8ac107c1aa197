import HistoryStore
import CSQLite
import Foundation
import Synchronization

/// The `HistoryStore` on one SQLite file (`StoreFront` over `SQLiteBackend`): a group-committing writer, a pool
/// of readers over WAL, and parked waits woken by commits.
///
/// Opening creates the folder and the file when missing, readable by their
/// owner only (`PrivateFiles`), switches to WAL, sets durability, applies
/// the missing migrations (refusing a newer or tampered schema, and a schema
/// with anything the migrations did not create) and opens the readers.
///
/// ```swift
/// let store = try SQLiteHistoryStore(configuration: SQLiteStoreConfiguration(path: "data/history.sqlite"))
/// let general = try await store.createConversation(id: ConversationID("general"))
/// let outcome = try await store.append(NewMessage(sender: "ana", body: "hi"), to: general.id)
/// let page = try store.page(of: general.id, PageQuery())
/// store.close()
/// ```
///
/// Related SQLite documentation: <https://www.sqlite.org/wal.html>
public final class SQLiteHistoryStore: StoreFront, @unchecked Sendable {
    private let backendOnFile: SQLiteBackend

    /// Opens (creating when missing) the store at `configuration.path` with
    /// the migrations embedded from `migrations/`.
    /// - Throws: `.migration` for a newer or tampered schema or one holding
    ///   objects no migration creates, `.storage` when
    ///   SQLite cannot open or configure the file, `.invalid` for a bad setting.
    public convenience init(configuration: SQLiteStoreConfiguration) throws(StoreError) {
        try self.init(configuration: configuration, migrations: Migration.bundled())
    }

    /// Opens with an explicit migration list (tests of the migrator).
    init(configuration: SQLiteStoreConfiguration, migrations: [Migration]) throws(StoreError) {
        backendOnFile = try SQLiteBackend(configuration: configuration, migrations: migrations)
        super.init(backend: backendOnFile)
    }
}

/// SQLite's primitives for `StoreFront`: a group-committing writer, a pool
/// of readers over WAL, and the wait tables its commits publish to.
final class SQLiteBackend: StoreEngine {
    let configuration: SQLiteStoreConfiguration
    let writer: SQLiteWriter
    private let readers: SQLiteReaderPool
    private let batcher: SQLiteAppendBatcher
    let waiters: Waiters
    /// One process: typing lives and expires here alone.
    let typing = TypingBoard()
    private let largeInboxes = LargeInboxes()
    /// This store alone has the file (`DatabaseFileLock`); released after the connections close.
    private let fileLock: DatabaseFileLock

    /// Opens with an explicit migration list (tests of the migrator).
    init(configuration: SQLiteStoreConfiguration, migrations: [Migration]) throws(StoreError) {
        guard configuration.readerCount >= 1 else {
            throw .invalidSetting("readerCount", reason: "must be at least 1")
        }
        guard configuration.maximumBatchSize >= 1 else {
            throw .invalidSetting("maximumBatchSize", reason: "must be at least 1")
        }
        guard configuration.walSizeLimitBytes >= 0 else {
            throw .invalidSetting("walSizeLimitBytes", reason: "must be at least 0")
        }
        let migrator = try SQLiteMigrator(migrations: migrations)
        let madePrivate = try PrivateFiles.prepare(databasePath: configuration.path)
        for line in madePrivate { configuration.onWarning?(line) }
        let fileLock = try DatabaseFileLock(path: configuration.path)

        let connection = try sqlite { () throws(SQLiteError) in try SQLiteConnection(path: configuration.path) }
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
        try SQLiteStoredJSONFill.run(connection)
        let writer = try SQLiteWriter(connection: connection)

        var readerConnections: [SQLiteConnection] = []
        for _ in 0..<configuration.readerCount {
            readerConnections.append(try Self.openReader(configuration))
        }
        self.configuration = configuration
        self.fileLock = fileLock
        self.writer = writer
        self.readers = SQLiteReaderPool(connections: readerConnections)
        // Every commit that changes an inbox publishes its activity to the
        // waits once readers see it (`SQLiteAppendBatcher`, `bulkAppend`): inbox
        // waits parked at the last published activity need not look first.
        self.waiters = Waiters(publishedActivity: writer.activity)
        self.batcher = SQLiteAppendBatcher(writer: writer, waiters: waiters,
                                     maximumBatchSize: configuration.maximumBatchSize,
                                     onBatchCommitted: configuration.onBatchCommitted)
    }

    /// How much of the file each reader maps (see `openReader`): all of it,
    /// up to SQLite's compile-time cap (2 GiB on Debian's build). Pages past
    /// the map are read with `pread` and copied: at 1 GiB, a file of 2.4 GB
    /// cost a deep page 5-17% more CPU than at the cap (docs/performance.md,
    /// "The readers' map up to SQLite's cap").
    static let readerMemoryMapBytes: Int64 = 1 << 40

    static func openReader(_ configuration: SQLiteStoreConfiguration) throws(StoreError) -> SQLiteConnection {
        try sqlite { () throws(SQLiteError) in
            let reader = try SQLiteConnection(path: configuration.path,
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
            // not memory; pages in the WAL are still read normally.
            try reader.execute(sql: "PRAGMA mmap_size = \(readerMemoryMapBytes)")
            return reader
        }
    }

    /// One read transaction on a pooled reader: a single snapshot.
    func read<T>(_ body: (any SnapshotReads) throws(StoreError) -> T) throws(StoreError) -> T {
        try readers.read { reader throws(StoreError) -> T in
            try reader.connection.transaction(.deferred, mapError: StoreError.init) { () throws(StoreError) -> T in
                try body(SQLiteReads(connection: reader.connection, seqCache: reader.seqs, roleCache: reader.roles, largeInboxes: largeInboxes))
            }
        }
    }

    func submit(_ request: WriteRequest) {
        batcher.submit(request)
    }

    /// One process writes the file, through `writer`: it sees every commit.
    var keptVersions: KeptVersions? { writer.keptVersions }

    /// A read of a conversation that need not exist: "not found" is an
    /// answer, so it proves a read works without a probe table.
    func ping() throws(StoreError) {
        do {
            _ = try read { reads throws(StoreError) in
                try reads.conversation(ConversationID("healthz-probe")!, access: .admin)
            }
        } catch .conversationNotFound {
            // The store answered.
        }
    }

    func finishWrites() {
        batcher.close()
    }

    func close() {
        readers.close()
        writer.close()
        fileLock.release()
    }

    /// Runs `body` with one of the readers' connections, outside any transaction.
    func withReader<T>(_ body: (SQLiteConnection) throws(StoreError) -> T) throws(StoreError) -> T {
        try readers.read { reader throws(StoreError) -> T in try body(reader.connection) }
    }
}

extension SQLiteHistoryStore {
    public var configuration: SQLiteStoreConfiguration { backendOnFile.configuration }

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
        guard !closed else { throw .closed }
        let result = Result { () throws(StoreError) in
            try backendOnFile.writer.sync { () -> Result<(ids: ClosedRange<Int64>, seq: Int64, version: Int64, activity: Int64)?, StoreError> in
                Result { () throws(StoreError) in try backendOnFile.writer.bulkAppend(messages, to: conversation) }
            }.get()
        }
        guard let loaded = try result.get() else { return nil }
        backendOnFile.waiters.publish([
            .version(conversation, loaded.version, changed: ChangedMessageIDs(range: loaded.ids)),
            .activity(loaded.activity, conversations: [loaded.seq], users: []),
        ])
        return loaded.ids
    }

    /// Runs `body` with the writer's connection on the writer queue (tests
    /// that force storage failures; nothing in the store calls it).
    func withWriterConnection<T>(_ body: (SQLiteConnection) -> T) -> T {
        backendOnFile.writer.withConnection(body)
    }

    /// Runs `body` with one of the readers' connections (tests of how
    /// every connection is configured; nothing in the store calls it).
    func withReaderConnection<T>(_ body: (SQLiteConnection) -> T) throws(StoreError) -> T {
        guard !closed else { throw .closed }
        return try backendOnFile.withReader { connection throws(StoreError) -> T in body(connection) }
    }

    /// `PRAGMA integrity_check`, then every message's stored JSON against
    /// its columns: `["ok"]` for a sound file, else SQLite's findings or
    /// the first rows whose stored JSON is not what their columns encode
    /// to. Pages serve the stored bytes as they are (`MessageJSONTail`), so
    /// a file edited by other means is found here, not by a client.
    public func checkIntegrity() throws(StoreError) -> [String] {
        guard !closed else { throw .closed }
        return try backendOnFile.withReader { connection throws(StoreError) -> [String] in
            try sqlite { () throws(SQLiteError) in
                let findings = try connection.makeStatement(sql: "PRAGMA integrity_check").rows { $0.string(0) }
                guard findings == ["ok"] else { return findings }
                let differing = try SQLiteStoredJSONFill.differingRows(connection, limit: 10)
                return differing.isEmpty ? ["ok"] : differing.map { place in
                    "message \(place & MessagePlace.maximumID) of conversation seq \(place >> MessagePlace.idBits): "
                        + "its stored JSON is not what its columns encode to"
                }
            }
        }
    }

}
