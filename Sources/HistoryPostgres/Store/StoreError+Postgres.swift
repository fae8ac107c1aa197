import HistoryStore

extension StoreError {
    /// The store's answer to a PostgreSQL failure, in the cases the API
    /// already maps, so a client hears the same thing whichever store
    /// failed:
    /// - a full disk (53100) is SQLite's full disk: 507, retry once an
    ///   operator made room;
    /// - a failure that may pass (the server restarting or unreachable, a
    ///   lost connection, too many connections, contention that outlasted
    ///   the writer's retries) is `.unavailable`: 503 `store_unavailable`;
    /// - anything else is a bug or damaged data: `.storage`, 500, with the
    ///   SQLSTATE and statement in the message for the log.
    package init(_ error: PostgresError) {
        if error.isStorageFull {
            self = .storageFailure("PostgreSQL: \(error)", full: true)
        } else if error.isTransient || error.kind == .readOnly {
            self = .unavailable(reason: error.description)
        } else {
            self = .storageFailure("PostgreSQL: \(error)")
        }
    }
}

/// Runs `body`, turning its `PostgresError` into the matching `StoreError`.
package func postgres<T>(_ body: () throws(PostgresError) -> T) throws(StoreError) -> T {
    do {
        return try body()
    } catch {
        throw StoreError(error)
    }
}

extension StoreError {
    /// The migrator's failures at start: a refused schema or a failed
    /// migration is `.migration`, an unreachable database `.unavailable`.
    package init(migration error: PostgresMigrationError) {
        switch error {
        case .refused(let reason):
            self = .migration(reason: reason)
        case .failed:
            self = .migration(reason: error.description)
        case .database(let underlying):
            self = StoreError(underlying)
        }
    }
}
