/// How durable an answered write is.
public enum Durability: String, Sendable, CaseIterable {
    /// `synchronous=FULL`: an answered write survives the loss of power.
    case full
    /// `synchronous=NORMAL`: survives a crash of the process, not of the machine.
    case normal
}

/// Everything a store needs to open, each with its default.
public struct StoreConfiguration: Sendable {
    /// The SQLite file; created, with its folder, when missing.
    public var path: String
    public var durability: Durability
    /// Read-only connections that serve pages while the writer commits (WAL).
    public var readerCount: Int
    /// How long a connection waits on a lock before failing, in milliseconds.
    public var busyTimeoutMilliseconds: Int32
    /// The most appends the writer commits in one transaction.
    public var maximumBatchSize: Int
    /// Called on the writer after every committed batch with its size; the
    /// server feeds its metrics from it.
    public var onBatchCommitted: (@Sendable (_ size: Int) -> Void)?

    public init(path: String, durability: Durability = .full, readerCount: Int = 4,
                busyTimeoutMilliseconds: Int32 = 5_000, maximumBatchSize: Int = 512,
                onBatchCommitted: (@Sendable (_ size: Int) -> Void)? = nil) {
        self.path = path
        self.durability = durability
        self.readerCount = readerCount
        self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
        self.maximumBatchSize = maximumBatchSize
        self.onBatchCommitted = onBatchCommitted
    }
}
