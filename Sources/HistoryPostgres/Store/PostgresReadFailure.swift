import HistoryStore

/// Runs PostgreSQL calls of a read and reports their failure as a
/// `StoreError`, as `sqlite { }` does for the SQLite store, so the reads
/// mix store rules and SQL under one error type.
///
/// A full disk keeps its meaning (`isStorageFull`: SQLite's `SQLITE_FULL`,
/// 13, is the code `StoreError` knows it by); every other failure is a
/// storage error (SQLite's `SQLITE_ERROR`, 1) carrying PostgreSQL's own
/// description, SQLSTATE and statement included.
@inline(__always)
func pgRead<T>(_ body: () throws(PostgresError) -> T) throws(StoreError) -> T {
    do {
        return try body()
    } catch {
        throw StoreError.storage(code: error.isStorageFull ? 13 : 1, message: error.description)
    }
}
