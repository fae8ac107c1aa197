import HistoryStore

extension StoreError {
    /// The one conversion of PostgreSQL's failures the store does not turn
    /// into a rule of its own (a unique `client_id`, a missing row).
    ///
    /// The database being out of reach (down, restarting, refusing, a
    /// connection lost, all connections taken) is `.unavailable`, which
    /// clients read as 503 `store_unavailable` and retry; a full disk is
    /// storage-full (507), as with SQLite; anything else is a failure of
    /// ours, `.storage` (500, details to the log only) with its SQLSTATE.
    package init(postgres error: PostgresError) {
        switch error.kind {
        case .connectionFailed, .connectionLost, .serverUnavailable, .tooManyConnections, .readOnly:
            self = .unavailable(reason: error.message)
        default:
            self = .storage(postgres: error)
        }
    }

    /// A failure PostgreSQL reported, with its SQLSTATE; a full disk keeps
    /// its meaning (`isStorageFull`).
    static func storage(postgres error: PostgresError) -> StoreError {
        .storage(StorageFailure(database: "PostgreSQL", code: error.sqlState ?? "", message: error.description,
                                isFull: error.isStorageFull))
    }

    /// A failure of this store's own making on PostgreSQL (a row it keeps
    /// is missing), or, with `full`, the disk (507 over HTTP).
    static func storageFailure(_ message: String, full: Bool = false) -> StoreError {
        .storage(StorageFailure(database: "PostgreSQL", code: full ? "53100" : "XX000", message: message, isFull: full))
    }

    /// A value no operation of this store can write: PostgreSQL's SQLSTATE
    /// for damaged data, `XX001`.
    static func impossibleStoredValue(_ message: String) -> StoreError {
        .impossibleStoredValue(message, database: "PostgreSQL", code: "XX001")
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
