import HistoryStore

/// Runs PostgreSQL calls of a read and reports their failure as a
/// `StoreError`, as `sqlite { }` does for the SQLite store, so the reads
/// mix store rules and SQL under one error type.
///
/// Every failure is a storage error carrying PostgreSQL's own
/// description and SQLSTATE; a full disk keeps its meaning (`isStorageFull`).
@inline(__always)
func pgRead<T>(_ body: () throws(PostgresError) -> T) throws(StoreError) -> T {
    do {
        return try body()
    } catch {
        throw StoreError.storage(postgres: error)
    }
}
