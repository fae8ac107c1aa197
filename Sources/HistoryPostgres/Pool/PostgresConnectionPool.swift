import Foundation

/// At most `maximumConnections` sessions to one database, opened when first
/// needed and reused; a caller borrows one for the length of a closure.
///
/// Why a pool and not one connection per request: a PostgreSQL session is a
/// server process (several MB, and `max_connections` is shared by every
/// instance), while a request is microseconds of work. Why blocking: the
/// store's work runs on Dispatch queues that already expect a call to wait
/// for its database.
///
/// A connection that comes back broken (the server restarted, the backend
/// was terminated) or inside a transaction the body did not end is closed,
/// not reused, so the next borrower opens a fresh one: the pool recovers
/// from a database restart by itself.
///
/// ```swift
/// let pool = PostgresConnectionPool(uri: uri, maximumConnections: 8)
/// let count = try pool.withConnection { connection throws(PostgresError) in
///     try connection.query("SELECT count(*) FROM conversations").int64(0, 0)
/// }
/// ```
///
/// The use of `@unchecked Sendable` is safe for this type because:
/// - every stored property but the constants is read and written only while
///   `condition` is locked;
/// - a connection is in exactly one place at a time: the idle list (touched
///   under the lock) or the one borrower's closure, which has it alone
///   until the closure returns.
public final class PostgresConnectionPool: @unchecked Sendable {
    public let uri: String
    public let maximumConnections: Int
    private let applicationName: String
    private let sessionOptions: String?

    private let condition = NSCondition()
    private var idle: [PGConnection] = []
    /// Idle plus borrowed plus being opened.
    private var open = 0
    private var isClosed = false

    /// - Parameters:
    ///   - uri: a libpq URI (see `PGConnection`).
    ///   - maximumConnections: the most sessions held at once (at least 1).
    ///   - applicationName: what `pg_stat_activity` shows.
    ///   - sessionOptions: server settings for each session (`PGConnection`'s `options`).
    public init(uri: String, maximumConnections: Int, applicationName: String = "history-server",
                sessionOptions: String? = nil) {
        precondition(maximumConnections >= 1, "a pool needs at least one connection")
        self.uri = uri
        self.maximumConnections = maximumConnections
        self.applicationName = applicationName
        self.sessionOptions = sessionOptions
    }

    deinit {
        close()
    }

    /// Runs `body` with a connection of its own, waiting while all are
    /// borrowed. The connection returns to the pool afterwards unless it
    /// broke or was left inside a transaction.
    /// - Throws: `.connectionFailed` when a new session cannot be opened,
    ///   `.connectionLost` when the pool is closed, or what `body` throws.
    public func withConnection<T>(_ body: (PGConnection) throws(PostgresError) -> T) throws(PostgresError) -> T {
        let connection = try checkOut()
        defer { checkIn(connection) }
        return try body(connection)
    }

    /// Closes the idle sessions now and the borrowed ones as they return;
    /// later borrowers get `.connectionLost`.
    public func close() {
        condition.lock()
        isClosed = true
        let closing = idle
        idle = []
        open -= closing.count
        condition.broadcast()
        condition.unlock()
        closing.forEach { $0.close() }
    }

    /// Sessions open now (idle or borrowed), for tests and metrics.
    public var openConnections: Int {
        condition.lock()
        defer { condition.unlock() }
        return open
    }

    // MARK: - Borrowing

    private func checkOut() throws(PostgresError) -> PGConnection {
        condition.lock()
        while true {
            if isClosed {
                condition.unlock()
                throw PostgresError(kind: .connectionLost, message: "the connection pool is closed")
            }
            if let connection = idle.popLast() {
                condition.unlock()
                return connection
            }
            if open < maximumConnections { break }
            condition.wait()
        }
        // Reserve the slot, then connect without holding the lock: a
        // connect can take as long as the server's connect timeout.
        open += 1
        condition.unlock()
        do {
            return try PGConnection(uri: uri, applicationName: applicationName, options: sessionOptions)
        } catch {
            release()
            throw error
        }
    }

    private func checkIn(_ connection: PGConnection) {
        let reusable = !connection.isBroken && connection.transactionStatus == .idle
        condition.lock()
        if reusable && !isClosed {
            idle.append(connection)
            condition.signal()
            condition.unlock()
            return
        }
        condition.unlock()
        connection.close()
        release()
    }

    /// Gives back the slot of a connection that was closed or never opened.
    private func release() {
        condition.lock()
        open -= 1
        condition.signal()
        condition.unlock()
    }
}
