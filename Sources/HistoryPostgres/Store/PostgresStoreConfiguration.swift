/// Everything a `PostgresHistoryStore` needs to open, each with its default.
public struct PostgresStoreConfiguration: Sendable {
    /// A libpq URI: `postgres://user@host:port/database?...` or
    /// `postgresql://...` (a socket folder as `?host=/run/postgresql`).
    public var uri: String
    /// Sessions that serve reads (pages, counters, the role check of every
    /// request in tokens mode). Each is a server process, and every
    /// instance's count adds up against `max_connections`.
    public var readerCount: Int
    /// Newest and `before` pages asked at the same time are read together,
    /// one statement for several (`ReadBatcher`); at most this many such
    /// statements run at once, each on a reading session. nil: a quarter of
    /// `readerCount`, at most one per core, at least 1. Fewer means larger statements, so less
    /// of PostgreSQL's CPU per page, and more waiting behind a slow one
    /// (docs/performance.md, "Pages read together on PostgreSQL").
    public var pageStatements: Int?
    /// Called after every statement of pages read together with how many it read (the server's metrics).
    public var onPageStatement: (@Sendable (_ pages: Int) -> Void)?
    /// The most writes the writer commits in one transaction.
    public var maximumBatchSize: Int
    /// What `pg_stat_activity` shows for this instance's sessions.
    public var applicationName: String
    /// Called after every committed batch with its size (the server's metrics).
    public var onBatchCommitted: (@Sendable (_ size: Int) -> Void)?
    /// What an operator should know and that did not stop the store: the
    /// listening connection lost and being replaced. Logged as a warning.
    public var onWarning: (@Sendable (_ message: String) -> Void)?

    public init(uri: String, readerCount: Int = 8, pageStatements: Int? = nil, maximumBatchSize: Int = 512,
                applicationName: String = "history-server",
                onBatchCommitted: (@Sendable (_ size: Int) -> Void)? = nil,
                onPageStatement: (@Sendable (_ pages: Int) -> Void)? = nil,
                onWarning: (@Sendable (_ message: String) -> Void)? = nil) {
        self.uri = uri
        self.readerCount = readerCount
        self.pageStatements = pageStatements
        self.onPageStatement = onPageStatement
        self.maximumBatchSize = maximumBatchSize
        self.applicationName = applicationName
        self.onBatchCommitted = onBatchCommitted
        self.onWarning = onWarning
    }

    /// True for a `--database` value that names a PostgreSQL database
    /// rather than a SQLite file.
    public static func isPostgresURI(_ database: String) -> Bool {
        database.hasPrefix("postgres://") || database.hasPrefix("postgresql://")
    }
}
