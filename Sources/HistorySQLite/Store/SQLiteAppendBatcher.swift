import HistoryStore
import Dispatch
import Synchronization

/// Group commit: writes queue up here while the writer is busy, and the
/// writer takes everything pending (up to `maximumBatchSize`) into one
/// transaction, so one fsync makes a whole batch durable.
///
/// No timer and no waiting for company: the writer starts as soon as a
/// request arrives when idle, and batches form by themselves while it is
/// committing (the more concurrent writers, the bigger the batches).
/// Closed-loop writers settle into two alternating halves, and that is
/// kept on purpose: waiting after a batch for its callers to come back
/// (PostgreSQL's commit_delay, adaptive) made bigger batches in the store
/// alone but fewer appends over HTTP, where a caller's round trip is as long
/// as a commit: the two halves pipeline one's round trip with the other's
/// commit, and waiting serialises them (docs/performance.md, "Group commit
/// without waiting for company"). Callers
/// are answered only after COMMIT returned, then waiters are woken with each
/// touched conversation's new version, then `onBatchCommitted` is told.
///
/// Those three steps run on a serial answer queue, not on the writer: waking
/// dozens of callers costs the waking thread a system call each, and on the
/// writer that time would be taken from the next batch, which held group
/// commit well below what it reaches now (docs/performance.md, "Answering
/// beside the writer"); answering beside it, the writer only writes.
/// Batches are answered in commit order.
final class SQLiteAppendBatcher: Sendable {
    private let state = Mutex(PendingWrites())
    private let writer: SQLiteWriter
    private let waiters: Waiters
    private let maximumBatchSize: Int
    private let onBatchCommitted: (@Sendable (_ size: Int) -> Void)?
    private let answers = DispatchQueue(label: "history-store.answers", qos: .userInitiated)
    private static let answerQueueKey = DispatchSpecificKey<Bool>()

    init(writer: SQLiteWriter, waiters: Waiters, maximumBatchSize: Int,
         onBatchCommitted: (@Sendable (_ size: Int) -> Void)?) {
        self.writer = writer
        self.waiters = waiters
        self.maximumBatchSize = max(1, maximumBatchSize)
        self.onBatchCommitted = onBatchCommitted
        answers.setSpecific(key: Self.answerQueueKey, value: true)
    }

    /// Queues `request`; after `close()` it is answered `.closed` at once.
    func submit(_ request: WriteRequest) {
        switch state.withLock({ $0.admit(request) }) {
        case .rejected: request.fail(.closed)
        case .startDrain: writer.queue.async { self.drain() }
        case .queued: break
        }
    }

    /// Refuses new writes, then returns once every queued one was written
    /// and answered (when called from a completion handler, the answers
    /// queued behind that handler follow after it returns).
    func close() {
        state.withLock { $0.close() }
        writer.sync { drain() }
        if DispatchQueue.getSpecific(key: Self.answerQueueKey) == nil {
            answers.sync {}
        }
    }

    /// Runs on the writer queue until nothing is pending.
    private func drain() {
        while true {
            let batch = state.withLock { $0.nextBatch(maximum: maximumBatchSize) }
            guard !batch.isEmpty else { return }
            let outcome = writer.perform(batch)
            let size = batch.count
            answers.async { [waiters, onBatchCommitted] in
                // Published before answered: a client that parks a poll
                // once answered finds the waiters (and the memberships they
                // keep) already past this commit.
                waiters.publish(outcome.committedChanges)
                for answer in outcome.answers { answer() }
                if outcome.committed { onBatchCommitted?(size) }
            }
        }
    }
}
