import HistoryStore
import Dispatch

/// The one connection that writes, and the serial queue that owns it.
///
/// Everything that changes the database runs here: group-committed batches
/// (`perform`, SQLiteWriter+Batch) of the operations (SQLiteWriter+Conversations,
/// SQLiteWriter+Messages, SQLiteWriter+Members) and the bulk loader (SQLiteWriter+BulkLoad).
/// Message ids are allocated here (SQLiteWriter+IDs), inside the writing
/// transaction, so they increase in commit order (guarantee 2).
///
/// The use of `@unchecked Sendable` is safe for this type because:
/// - `connection`, `nextMessageID`, `committedSeqs`, `batchSeqs` and `pending` are only
///   touched by code running on `queue` (every entry point is called through
///   `sync` or `queue.async`, and `perform`/`bulkAppend` check it with
///   `dispatchPrecondition`);
/// - `queue` itself is a `let` of a thread-safe type.
final class SQLiteWriter: @unchecked Sendable {
    let queue = DispatchQueue(label: "history-store.writer", qos: .userInitiated)
    let connection: SQLiteConnection
    /// The next id to hand out: never below `max(id) + 1`, never lowered,
    /// so an id that might have reached a caller is never reused.
    var nextMessageID: Int64
    /// Public id -> seq for committed conversations (immutable mapping).
    var committedSeqs: [String: Int64] = [:]
    /// Conversations created by the batch being written; kept apart until
    /// its COMMIT succeeds.
    var batchSeqs: [String: Int64] = [:]
    /// The counters of the conversations the batch being written touched,
    /// keyed by seq; empty between batches.
    var pending: [Int64: PendingCounters] = [:]
    /// The last `activity` value handed out: never lowered, so a value is
    /// never given to two changes. Kept here and written to
    /// `activity_counter` once per batch.
    var activity: Int64
    /// The counter's value as committed: the batch writes the row only when
    /// `activity` moved past it.
    var storedActivity: Int64
    /// Users whose marker or membership the batch being written changed:
    /// their inbox waits are woken after COMMIT.
    var batchInboxUsers: Set<String> = []
    /// The changes the batch being written made, for the change log
    /// (SQLiteWriter+ChangeLog): written just before COMMIT.
    var batchChanges: [ChangeLogEntry] = []
    /// The latest `created_at` handed out (SQLiteWriter+ChangeLog): never lowered.
    var lastCreatedAt: Int64
    /// Conversations (seqs) whose memberships the batch being written
    /// changed: their kept roles are forgotten once it committed.
    var batchMembershipSeqs: Set<Int64> = []
    /// Each conversation's committed version and members' roles, for 304s
    /// without a read: every version a transaction writes is marked here
    /// before its COMMIT, a committed membership change drops that
    /// conversation's roles before it is answered, and everything is
    /// forgotten when a transaction fails (`KeptVersions`).
    let keptVersions = KeptVersions()

    private static let seqCacheCapacity = 100_000

    private static let queueKey = DispatchSpecificKey<ObjectIdentifier>()

    init(connection: SQLiteConnection) throws(StoreError) {
        self.connection = connection
        self.nextMessageID = try Self.loadNextMessageID(connection)
        let activity = try Self.loadActivity(connection)
        self.activity = activity
        self.storedActivity = activity
        self.lastCreatedAt = try Self.loadLastCreatedAt(connection)
        queue.setSpecific(key: Self.queueKey, value: ObjectIdentifier(self))
    }

    /// Runs `body` on the writer queue and waits for it; runs it at once when
    /// already there (a completion handler that drops the last reference to
    /// the store closes it from this queue, and `sync` would deadlock).
    func sync<T>(_ body: () -> T) -> T {
        if DispatchQueue.getSpecific(key: Self.queueKey) == ObjectIdentifier(self) {
            return body()
        }
        return queue.sync(execute: body)
    }

    /// Runs `body` with the writing connection, on the writer queue: for
    /// tests that must reach below the store, e.g. to make the file full.
    func withConnection<T>(_ body: (SQLiteConnection) -> T) -> T {
        sync { body(connection) }
    }

    /// Closes the connection, after whatever the queue is running.
    func close() {
        sync { connection.close() }
    }

    // MARK: - Conversation keys

    /// The conversation's internal key; nil when it does not exist (yet).
    func seq(of id: ConversationID) throws(StoreError) -> Int64? {
        if let seq = committedSeqs[id.rawValue] ?? batchSeqs[id.rawValue] { return seq }
        let seq = try sqlite { () throws(SQLiteError) in
            try connection.cachedStatement(sql: "SELECT seq FROM conversations WHERE id = ?")
                .firstRow(id.rawValue) { $0.int64(0) }
        }
        if let seq {
            _ = try MessagePlace.checkedSeq(seq, of: id)
            // Not created by this batch (that would be in batchSeqs), so committed.
            if committedSeqs.count >= Self.seqCacheCapacity { committedSeqs.removeAll(keepingCapacity: true) }
            committedSeqs[id.rawValue] = seq
        }
        return seq
    }
}
