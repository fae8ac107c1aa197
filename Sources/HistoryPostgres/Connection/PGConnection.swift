import CLibPQ
#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// Owns one PostgreSQL connection, `PGconn*`: connecting from a libpq URI,
/// statements (simple, with parameters, prepared), transactions, closing.
///
/// Calls block the calling thread until the server answers, and a
/// connection is used by one thread at a time (the pool checks it out to
/// one caller): it is not `Sendable`, and the owners that hand it between
/// threads carry the proof. `socketDescriptor` is there for what must not
/// block a thread (a `LISTEN` connection watched by a Dispatch source).
///
/// ```swift
/// let connection = try PGConnection(uri: "postgresql://app@/history?host=/run/postgresql")
/// let result = try connection.query("SELECT count(*) FROM messages WHERE conversation_seq = $1", [.int64(7)])
/// print(result.int64(0, 0))
/// ```
///
/// Related PostgreSQL documentation:
/// <https://www.postgresql.org/docs/current/libpq-connect.html>
public final class PGConnection {
    /// The form of the rows a statement returns.
    public enum ResultFormat: Int32, Sendable {
        case text = 0
        /// Integers as 8 bytes instead of decimal digits; text is the same.
        case binary = 1
    }

    /// How much a transaction sees of the others running beside it.
    public enum IsolationLevel: String, Sendable {
        /// Each statement sees what was committed when it started; a write
        /// that waited for a row lock then works on the row as committed.
        /// The store's writers use it (see migrations/postgres/0001_init.sql).
        case readCommitted = "READ COMMITTED"
        /// One snapshot for the whole transaction (a consistent page and its
        /// counters); a write that meets a newer row version fails with
        /// `.serializationFailure`.
        case repeatableRead = "REPEATABLE READ"
        case serializable = "SERIALIZABLE"
    }

    /// What the server says about the session's transaction.
    public enum TransactionStatus: Sendable {
        case idle, active, inTransaction, failedTransaction, unknown
    }

    private var handle: OpaquePointer?
    /// Statements prepared by `cachedStatement(sql:)` (or by a pipeline,
    /// PGConnection+Pipeline), by SQL text.
    var prepared: [String: PGPreparedStatement] = [:]

    /// Connects (blocking) to the database a libpq URI or `key=value`
    /// string names. The client encoding is always UTF-8, whatever the URI
    /// says: every string the store reads and writes is UTF-8.
    /// - Parameters:
    ///   - uri: `postgresql://user@host:port/db?...` (or `postgres://`).
    ///   - applicationName: shown in `pg_stat_activity` unless the URI
    ///     names one.
    ///   - connectTimeout: seconds, unless the URI sets `connect_timeout`.
    ///   - options: server settings for the session (libpq's `options`,
    ///     e.g. `-c plan_cache_mode=force_generic_plan`), unless the URI
    ///     sets its own.
    /// - Throws: `PostgresError` of kind `.connectionFailed`.
    public init(uri: String, applicationName: String = "history-server", connectTimeout: Int = 10,
                options: String? = nil) throws(PostgresError) {
        // Later keywords override earlier ones, and the URI's own
        // parameters override those before it (expand_dbname = 1).
        // TCP keepalives on by default (a URI may set its own): a session
        // whose peer vanished without closing (a partition, a host that
        // died) is noticed in about 30 s instead of never. That matters most
        // for the LISTEN session, which otherwise only waits to be read.
        // libpq ignores them on a Unix socket.
        var keywords = ["connect_timeout", "fallback_application_name", "keepalives", "keepalives_idle",
                        "keepalives_interval", "keepalives_count"]
        var values = [String(connectTimeout), applicationName, "1", "15", "5", "3"]
        if let options {
            keywords.append("options")
            values.append(options)
        }
        keywords += ["dbname", "client_encoding"]
        values += [uri, "UTF8"]
        let connection = Self.withCStrings(keywords) { keywords in
            Self.withCStrings(values) { values in PQconnectdbParams(keywords, values, 1) }
        }
        guard let connection, PQstatus(connection) == CONNECTION_OK else {
            let message = connection.map { Self.trimmed(String(cString: PQerrorMessage($0))) } ?? "out of memory"
            // "Note that when PQconnectdb returns a non-null pointer, you
            // must call PQfinish when you are finished with it [...] even if
            // the connection attempt fails." (libpq-connect.html)
            PQfinish(connection)
            throw PostgresError(kind: .connectionFailed, message: message)
        }
        // libpq prints notices (a CREATE ... IF NOT EXISTS that skipped, a
        // WARNING) to stderr by default; a server's stderr is its log, and
        // these are not news to the operator.
        PQsetNoticeProcessor(connection, { _, _ in }, nil)
        handle = connection
    }

    deinit {
        close()
    }

    /// Ends the session; nothing more can be sent. Safe to call twice.
    public func close() {
        if let handle { PQfinish(handle) }
        handle = nil
        prepared = [:]
    }

    // MARK: - State

    public var isOpen: Bool { handle != nil }

    /// The `PGconn*`, for the extensions of this type (nil once closed).
    var rawHandle: OpaquePointer? { handle }

    /// The connection can no longer be used: closed, or lost (a pool drops
    /// such a connection instead of handing it out again).
    public var isBroken: Bool {
        guard let handle else { return true }
        return PQstatus(handle) != CONNECTION_OK
    }

    /// The value libpq uses for a connection keyword (`keepalives_idle`,
    /// `host`, ...), defaults included; nil when unset or closed.
    public func connectionOption(_ keyword: String) -> String? {
        guard let handle, let options = PQconninfo(handle) else { return nil }
        defer { PQconninfoFree(options) }
        var option = options
        while let name = option.pointee.keyword {
            if String(cString: name) == keyword { return option.pointee.val.map { String(cString: $0) } }
            option += 1
        }
        return nil
    }

    /// The server process serving this session (`pg_backend_pid()`).
    public var backendPID: Int32 {
        handle.map { PQbackendPID($0) } ?? 0
    }

    /// The connection's socket, to watch for readability (-1 when closed).
    public var socketDescriptor: Int32 {
        handle.map { PQsocket($0) } ?? -1
    }

    public var transactionStatus: TransactionStatus {
        guard let handle else { return .unknown }
        switch PQtransactionStatus(handle) {
        case PQTRANS_IDLE: return .idle
        case PQTRANS_ACTIVE: return .active
        case PQTRANS_INTRANS: return .inTransaction
        case PQTRANS_INERROR: return .failedTransaction
        default: return .unknown
        }
    }

    // MARK: - Statements

    /// Runs one or more statements without parameters, through the simple
    /// query protocol (schema, `BEGIN`, `SET`); returns the last result.
    @discardableResult
    public func execute(sql: String) throws(PostgresError) -> PGResult {
        let handle = try openHandle()
        return try check(PQexec(handle, sql), sql: sql)
    }

    /// Runs one statement with `$1`, `$2`, ... bound to `parameters`.
    @discardableResult
    public func query(_ sql: String, _ parameters: [PostgresValue] = [],
                      resultFormat: ResultFormat = .binary) throws(PostgresError) -> PGResult {
        let handle = try openHandle()
        let encoded = EncodedParameters(parameters)
        let result = encoded.withArrays { types, values, lengths, formats in
            PQexecParams(handle, sql, encoded.count, types, values, lengths, formats, resultFormat.rawValue)
        }
        return try check(result, sql: sql)
    }

    /// Prepares `sql` on the server under `name` (once per session: names
    /// are the session's). Parameter types are inferred from the statement;
    /// `types` fixes them where it cannot tell (`SELECT $1`).
    public func prepare(sql: String, name: String, types: [PostgresValue] = []) throws(PostgresError) -> PGPreparedStatement {
        let handle = try openHandle()
        let oids = types.map(\.encoded.type)
        let result = oids.withUnsafeBufferPointer { oids in
            PQprepare(handle, name, sql, Int32(oids.count), oids.baseAddress)
        }
        _ = try check(result, sql: sql)
        return PGPreparedStatement(name: name, sql: sql)
    }

    /// The statement for `sql`, prepared on this session at its first use
    /// and kept for the session's life (named `s1`, `s2`, ...). A lost
    /// connection loses them with it; the pool never reuses such a one.
    public func cachedStatement(sql: String) throws(PostgresError) -> PGPreparedStatement {
        if let statement = prepared[sql] { return statement }
        let statement = try prepare(sql: sql, name: "s\(prepared.count + 1)")
        prepared[sql] = statement
        return statement
    }

    /// Runs a prepared statement with `parameters`.
    @discardableResult
    public func execute(_ statement: PGPreparedStatement, _ parameters: [PostgresValue] = [],
                        resultFormat: ResultFormat = .binary) throws(PostgresError) -> PGResult {
        let handle = try openHandle()
        let encoded = EncodedParameters(parameters)
        let result = encoded.withArrays { _, values, lengths, formats in
            PQexecPrepared(handle, statement.name, encoded.count, values, lengths, formats, resultFormat.rawValue)
        }
        return try check(result, sql: statement.sql)
    }

    // MARK: - Transactions

    /// Runs `body` between `BEGIN` and `COMMIT`; rolls back when it throws.
    ///
    /// A `COMMIT` that fails with `.connectionLost` leaves the outcome
    /// unknown (the server may have committed before the connection
    /// dropped): callers decide from data they can check (a `client_id`).
    @discardableResult
    public func transaction<T>(isolation: IsolationLevel = .readCommitted,
                               _ body: () throws(PostgresError) -> T) throws(PostgresError) -> T {
        try execute(sql: "BEGIN ISOLATION LEVEL \(isolation.rawValue)")
        let value: T
        do {
            value = try body()
        } catch {
            rollbackQuietly()
            throw error
        }
        do {
            try execute(sql: "COMMIT")
        } catch {
            rollbackQuietly()
            throw error
        }
        return value
    }

    /// Ends a failed transaction; a broken connection has none left to end.
    private func rollbackQuietly() {
        guard !isBroken else { return }
        _ = try? execute(sql: "ROLLBACK")
    }

    // MARK: - Errors

    private func openHandle() throws(PostgresError) -> OpaquePointer {
        guard let handle else {
            throw PostgresError(kind: .connectionLost, message: "the connection is closed")
        }
        return handle
    }

    /// Wraps a successful result, or throws what went wrong. A failure that
    /// left the connection unusable is `.connectionLost` whatever the
    /// server said last (it may be the 57P01 of a terminated backend).
    private func check(_ result: OpaquePointer?, sql: String) throws(PostgresError) -> PGResult {
        guard let handle else { throw PostgresError(kind: .connectionLost, message: "the connection is closed") }
        guard let result else {
            throw PostgresError(kind: isBroken ? .connectionLost : .client,
                                message: Self.trimmed(String(cString: PQerrorMessage(handle))), sql: sql)
        }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY, PGRES_SINGLE_TUPLE:
            return PGResult(handle: result)
        default:
            let error = Self.error(from: result, connectionBroken: PQstatus(handle) != CONNECTION_OK, sql: sql)
            PQclear(result)
            throw error
        }
    }

    /// What a failed result says (also for PGConnection+Copy's results).
    static func error(from result: OpaquePointer, connectionBroken: Bool, sql: String) -> PostgresError {
        func field(_ code: Int32) -> String? {
            PQresultErrorField(result, code).map { String(cString: $0) }
        }
        let sqlState = field(clibpq_diag_sqlstate())
        let message = field(clibpq_diag_message_primary()) ?? trimmed(String(cString: PQresultErrorMessage(result)))
        var kind = sqlState.map(PostgresError.kind(forSQLState:)) ?? .client
        if connectionBroken { kind = .connectionLost }
        return PostgresError(kind: kind, sqlState: sqlState, message: message, detail: field(clibpq_diag_message_detail()),
                             constraint: field(clibpq_diag_constraint_name()), sql: sql)
    }

    static func trimmed(_ message: String) -> String {
        var text = Substring(message)
        while let last = text.last, last.isWhitespace { text.removeLast() }
        return String(text)
    }

    /// Calls `body` with a NULL-terminated array of C strings.
    private static func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
        let duplicates = strings.map { strdup($0) }
        defer { duplicates.forEach { free($0) } }
        let pointers = duplicates.map { UnsafePointer($0) } + [nil]
        return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
    }
}

/// A connection is used by one thread at a time; see the type's comment.
@available(*, unavailable)
extension PGConnection: Sendable {}
