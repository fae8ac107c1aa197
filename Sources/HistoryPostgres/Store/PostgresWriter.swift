import Dispatch
import HistoryStore
import Synchronization

/// What one committed batch changed: the same notices it sent with pg_notify.
package struct PostgresCommit: Sendable {
    package var notices: [ChangeNotice]
    /// How many requests the batch held (answered, failed ones included).
    package var size: Int

    package init(notices: [ChangeNotice], size: Int) {
        self.notices = notices
        self.size = size
    }
}

/// Group commit on PostgreSQL: the writes of one instance queue here while
/// a batch is being written, and the next batch takes everything pending
/// (up to `maximumBatchSize`) into one transaction on one pooled
/// connection, so one WAL flush makes the whole batch durable.
///
/// The SQLite store's `SQLiteAppendBatcher`, with what several instances sharing
/// one database change (see `PostgresBatch` and the comments of
/// migrations/postgres/0001_init.sql): locks instead of a single writer,
/// and the batch's changes sent to every instance with `pg_notify` inside
/// the transaction. As there: no timer, a batch starts as soon as the
/// writer is idle; requests are answered only after COMMIT returned, in
/// commit order, on an answer queue beside the writer (waking callers costs
/// a system call each, taken from the next batch if the writer did it);
/// `onCommitted` (which publishes the commit to this instance's waiters)
/// is told before the batch's answers.
///
/// Inputs were validated by the caller (`MessageRules`, the read marker's
/// rule, message ids ≥ 1), as `SQLiteHistoryStore` does before its batcher.
package final class PostgresWriter: Sendable {
    private let pool: PostgresConnectionPool
    private let maximumBatchSize: Int
    private let onCommitted: @Sendable (PostgresCommit) -> Void
    private let state = Mutex(PendingWrites())
    private let knownSeqs = KnownConversationSeqs()
    /// Where batches are written, one at a time: never the caller's thread.
    private let queue = DispatchQueue(label: "history-postgres.writer", qos: .userInitiated)
    private let answers = DispatchQueue(label: "history-postgres.answers", qos: .userInitiated)
    private static let queueKey = DispatchSpecificKey<Bool>()
    private static let answerQueueKey = DispatchSpecificKey<Bool>()

    /// How many times a batch that lost a deadlock or a serialization race
    /// is written again before its requests are answered `.unavailable`.
    /// Nothing was answered yet (answers wait for COMMIT), so running it
    /// again applies nothing twice.
    static let maximumAttempts = 4

    package init(pool: PostgresConnectionPool, maximumBatchSize: Int,
                 onCommitted: @escaping @Sendable (PostgresCommit) -> Void) {
        self.pool = pool
        self.maximumBatchSize = max(1, maximumBatchSize)
        self.onCommitted = onCommitted
        queue.setSpecific(key: Self.queueKey, value: true)
        answers.setSpecific(key: Self.answerQueueKey, value: true)
    }

    /// Queues `request` (any write kind); after `close()` it is answered
    /// `.closed` at once.
    package func submit(_ request: WriteRequest) {
        switch state.withLock({ $0.admit(request) }) {
        case .rejected: request.fail(.closed)
        case .startDrain: queue.async { self.drain() }
        case .queued: break
        }
    }

    /// Refuses new writes, then returns once every write queued before was
    /// written and answered, like the SQLite store's `close` (when called
    /// from a completion handler, the answers queued behind that handler
    /// follow after it returns). The pool is the caller's to close.
    package func close() {
        state.withLock { $0.close() }
        if DispatchQueue.getSpecific(key: Self.queueKey) == true {
            drain()
        } else {
            queue.sync { drain() }
        }
        if DispatchQueue.getSpecific(key: Self.answerQueueKey) == nil {
            answers.sync {}
        }
    }

    /// Seeding and benchmarks: `messages` appended to `conversation` in one
    /// transaction, outside group commit (see `PostgresBulkLoad`). Returns
    /// the first and last id given; nil for an empty list.
    package func bulkAppend(_ messages: [NewMessage], to conversation: ConversationID) throws(StoreError)
        -> ClosedRange<Int64>? {
        guard !state.withLock({ $0.isClosed }) else { throw .closed }
        guard !messages.isEmpty else { return nil }
        let run = { () -> Result<(ids: ClosedRange<Int64>, commit: PostgresCommit), StoreError> in
            Result { () throws(StoreError) in
                try postgres { () throws(PostgresError) in
                    try self.pool.withConnection { connection throws(PostgresError) in
                        try PostgresBulkLoad(connection: connection).append(messages, to: conversation)
                    }
                }.get()
            }
        }
        let result = DispatchQueue.getSpecific(key: Self.queueKey) == true ? run() : queue.sync(execute: run)
        let loaded = try result.get()
        answers.async { [onCommitted] in onCommitted(loaded.commit) }
        return loaded.ids
    }

    /// Runs on `queue` until nothing is pending.
    private func drain() {
        while true {
            let batch = state.withLock { $0.nextBatch(maximum: maximumBatchSize) }
            guard !batch.isEmpty else { return }
            let outcome = write(batch)
            answers.async { [onCommitted] in
                // Published here before answered, as on SQLite: a client
                // that parks a poll once answered finds this instance's
                // waiters past the commit (others hear it through LISTEN).
                if let commit = outcome.commit { onCommitted(commit) }
                for answer in outcome.answers { answer() }
            }
        }
    }

    /// One batch, written again after a lost deadlock or serialization race.
    private func write(_ batch: [WriteRequest]) -> PostgresBatch.Outcome {
        var attempt = 1
        while true {
            let outcome: PostgresBatch.Outcome
            do throws(PostgresError) {
                outcome = try pool.withConnection { connection throws(PostgresError) in
                    PostgresBatch(connection: connection, knownSeqs: knownSeqs).perform(batch)
                }
            } catch {
                // The pool could not give a connection: the server is down
                // or refusing; nothing was written.
                return .failed(batch, with: StoreError(postgres: error))
            }
            guard outcome.mayRetry, attempt < Self.maximumAttempts else { return outcome }
            attempt += 1
        }
    }
}
