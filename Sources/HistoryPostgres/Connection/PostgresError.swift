/// A failed PostgreSQL call: what kind of failure it is (the part callers
/// switch on), the SQLSTATE the server sent, its message, and the SQL that
/// was running, so a log line says what broke without a debugger.
///
/// The kind decides what a caller may do next: `isTransient` failures may
/// succeed when tried again (on a new connection for a lost one, in a new
/// transaction for a serialization failure); `isStorageFull` is the disk,
/// reported to clients as such; anything else is a bug or bad data.
///
/// ```swift
/// do { try connection.execute(sql: "INSERT ...") }
/// catch let error where error.kind == .uniqueViolation { ... }
/// ```
///
/// Related PostgreSQL documentation:
/// <https://www.postgresql.org/docs/current/errcodes-appendix.html>
public struct PostgresError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The failures the store treats differently; everything else is `.other`.
    public enum Kind: Sendable, Hashable {
        /// Connecting failed: the server is down, starting, refusing, or
        /// the address or credentials are wrong. libpq gives no SQLSTATE
        /// here, so a wrong password looks the same as a restart; callers
        /// retry, and report the message when retries run out.
        case connectionFailed
        /// The connection broke while in use (the server restarted, the
        /// backend was terminated, the network dropped). What the statement
        /// did is unknown: a COMMIT in flight may or may not have happened,
        /// so only an idempotent operation may be retried blindly.
        case connectionLost
        /// 23505: a unique index refused the row.
        case uniqueViolation
        /// 23503: a foreign key refused the row.
        case foreignKeyViolation
        /// 23514: a CHECK constraint refused the row.
        case checkViolation
        /// 23502: a NOT NULL column got a null.
        case notNullViolation
        /// 40001: the transaction lost a race at REPEATABLE READ or
        /// SERIALIZABLE; it was rolled back whole and may be run again.
        case serializationFailure
        /// 40P01: the transaction was chosen to break a deadlock; rolled
        /// back whole, it may be run again.
        case deadlockDetected
        /// 55P03: `lock_timeout` or `NOWAIT` could not take a lock.
        case lockNotAvailable
        /// 57014: `statement_timeout` or a cancel request stopped the statement.
        case queryCanceled
        /// 53100: the server could not extend a file (the disk is full).
        case diskFull
        /// 53200: the server ran out of memory.
        case outOfMemory
        /// 53300: the server's `max_connections` are all in use.
        case tooManyConnections
        /// 57P01, 57P02, 57P03: the server is shutting down, crashed, or is
        /// not accepting connections yet (starting or recovering).
        case serverUnavailable
        /// 25006: a write was sent to a read-only server (a standby).
        case readOnly
        /// libpq itself refused the call before the server saw it (bad
        /// parameters, a result of an unexpected shape).
        case client
        /// Any other SQLSTATE; `sqlState` says which.
        case other
    }

    public let kind: Kind
    /// The five-character SQLSTATE, when the server sent one.
    public let sqlState: String?
    public let message: String
    /// The server's DETAIL line (which key was duplicated, for instance).
    public let detail: String?
    /// The constraint that refused the row, for the integrity violations.
    public let constraint: String?
    public let sql: String?

    public init(kind: Kind, sqlState: String? = nil, message: String, detail: String? = nil,
                constraint: String? = nil, sql: String? = nil) {
        self.kind = kind
        self.sqlState = sqlState
        self.message = message
        self.detail = detail
        self.constraint = constraint
        self.sql = sql
    }

    /// The kind a SQLSTATE means (class 08 is a broken connection, whatever
    /// the subclass).
    public static func kind(forSQLState state: String) -> Kind {
        switch state {
        case "23505": .uniqueViolation
        case "23503": .foreignKeyViolation
        case "23514": .checkViolation
        case "23502": .notNullViolation
        case "40001": .serializationFailure
        case "40P01": .deadlockDetected
        case "55P03": .lockNotAvailable
        case "57014": .queryCanceled
        case "53100": .diskFull
        case "53200": .outOfMemory
        case "53300": .tooManyConnections
        case "57P01", "57P02", "57P03": .serverUnavailable
        case "25006": .readOnly
        case _ where state.hasPrefix("08"): .connectionLost
        default: .other
        }
    }

    /// Worth trying again: on a new connection, or as a new transaction.
    /// A lost connection's statement may have taken effect (see
    /// `Kind.connectionLost`): retry only what is idempotent.
    public var isTransient: Bool {
        switch kind {
        case .connectionFailed, .connectionLost, .serializationFailure, .deadlockDetected,
             .lockNotAvailable, .tooManyConnections, .serverUnavailable, .outOfMemory:
            true
        default:
            false
        }
    }

    /// The server could not grow its files: clients hear "storage full", not
    /// "internal error", and an operator has to make room.
    public var isStorageFull: Bool { kind == .diskFull }

    public var description: String {
        var text = "PostgreSQL error"
        if let sqlState { text += " \(sqlState)" }
        text += ": \(message)"
        if let detail { text += " (\(detail))" }
        if let sql { text += " (in `\(sql)`)" }
        return text
    }
}
