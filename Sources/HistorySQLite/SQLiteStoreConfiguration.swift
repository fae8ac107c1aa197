import Foundation
import HistoryStore
import HostResources
/// How durable an answered write is.
public enum SQLiteDurability: String, Sendable, CaseIterable {
    /// `synchronous=FULL`: an answered write survives the loss of power.
    case full
    /// `synchronous=NORMAL`: survives a crash of the process, not of the machine.
    case normal
}

/// Everything a store needs to open, each with its default.
public struct SQLiteStoreConfiguration: Sendable {
    /// The SQLite file; created, with its folder, when missing (0600 and
    /// 0700 whatever the umask; see `PrivateFiles`).
    public var path: String
    public var durability: SQLiteDurability
    /// Read-only connections that serve pages while the writer commits (WAL).
    /// The server also lets this many of its threads block in a read at once.
    public var readerCount: Int
    /// One reader per CPU, at least 2: a SQLite read is CPU work (the file is
    /// mapped), so more readers than cores only add threads that take turns
    /// on them. On two cores, 2 readers served 5% to 15% more deep pages than
    /// 4, with less CPU each, on 40,000 and on 2.5 million messages
    /// (docs/performance.md, "How many SQLite readers").
    /// Cores are those the process may use (`AvailableProcessors`), not
    /// the machine's: a container limited to 2 CPUs of 64 gets 2.
    public static var defaultReaderCount: Int { max(2, AvailableProcessors.count) }
    /// How long a connection waits on a lock before failing, in milliseconds.
    public var busyTimeoutMilliseconds: Int32
    /// The most appends the writer commits in one transaction.
    public var maximumBatchSize: Int
    /// The size the WAL file is cut back to when SQLite starts it over
    /// after a checkpoint (`journal_size_limit`). Without it the file keeps
    /// the largest size it ever reached, e.g. while a long read held back
    /// checkpoints during a burst of appends. Default 64 MiB: far above the
    /// ~8 MiB a checkpoint normally leaves, so it is not truncated and
    /// regrown on every cycle.
    public var walSizeLimitBytes: Int64
    /// Whether readers prefetch each mapped database page into the CPU
    /// caches whole when SQLite takes it (see `PrefetchingVFS`). On by
    /// default: cold pages cost less (docs/performance.md, "Reading cold pages"). Off
    /// only to measure what it gains, or if a platform's SQLite misbehaves
    /// with a wrapped VFS.
    public var prefetchesPages: Bool
    /// Called on the writer after every committed batch with its size; the
    /// server feeds its metrics from it.
    public var onBatchCommitted: (@Sendable (_ size: Int) -> Void)?
    /// Called while the store opens with what an operator should know and
    /// that did not stop it: a database file other users could read, made
    /// private. The server logs it as a warning.
    public var onWarning: (@Sendable (_ message: String) -> Void)?

    public init(path: String, durability: SQLiteDurability = .full, readerCount: Int = SQLiteStoreConfiguration.defaultReaderCount,
                busyTimeoutMilliseconds: Int32 = 5_000, maximumBatchSize: Int = 512,
                walSizeLimitBytes: Int64 = 64 << 20, prefetchesPages: Bool = true,
                onBatchCommitted: (@Sendable (_ size: Int) -> Void)? = nil,
                onWarning: (@Sendable (_ message: String) -> Void)? = nil) {
        self.path = path
        self.durability = durability
        self.readerCount = readerCount
        self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
        self.maximumBatchSize = maximumBatchSize
        self.walSizeLimitBytes = walSizeLimitBytes
        self.prefetchesPages = prefetchesPages
        self.onBatchCommitted = onBatchCommitted
        self.onWarning = onWarning
    }
}
