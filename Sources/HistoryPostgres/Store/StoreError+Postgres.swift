import HistoryStore

extension StoreError {
    /// The one conversion of PostgreSQL's failures the store does not turn
    /// into a rule of its own (a unique `client_id`, a missing row).
    ///
    /// The database being out of reach (down, restarting, refusing, a
    /// connection lost, all connections taken) is `.unavailable`, which
    /// clients read as 503 `store_unavailable` and retry; a full disk is
    /// storage-full (507), as with SQLite; anything else is a failure of
    /// ours, `.storage` (500, details to the log only), coded as SQLite's
    /// generic error since that case carries SQLite's codes.
    package init(postgres error: PostgresError) {
        switch error.kind {
        case .connectionFailed, .connectionLost, .serverUnavailable, .tooManyConnections, .readOnly:
            self = .unavailable(reason: error.message)
        case .diskFull:
            self = .storage(code: 13 /* SQLITE_FULL */, message: error.description)
        default:
            self = .storage(code: 1 /* SQLITE_ERROR */, message: error.description)
        }
    }

    /// The migrator's failures at start: a refused schema is `.migration`,
    /// an unreachable database `.unavailable`.
    package init(migration error: PostgresMigrationError) {
        switch error {
        case .refused(let reason):
            self = .migration(reason: reason)
        case .failed:
            self = .migration(reason: error.description)
        case .database(let underlying):
            self = StoreError(postgres: underlying)
        }
    }
}

/// Runs PostgreSQL calls and reports their failure as a `StoreError`.
@inline(__always)
package func postgres<T>(_ body: () throws(PostgresError) -> T) throws(StoreError) -> T {
    do {
        return try body()
    } catch {
        throw StoreError(postgres: error)
    }
}
