import HistoryStore
import HistorySQLite

/// Runs `body` with a store on a real SQLite file in a new temporary folder;
/// the store is closed and the folder removed whatever `body` does.
@discardableResult
public func withTemporaryStore<T>(
    durability: SQLiteDurability = .normal,
    maximumBatchSize: Int = 512,
    onBatchCommitted: (@Sendable (Int) -> Void)? = nil,
    _ body: (SQLiteHistoryStore) async throws -> T
) async throws -> T {
    try await withTemporaryDirectory { directory in
        let configuration = SQLiteStoreConfiguration(path: directory.databasePath, durability: durability,
                                               maximumBatchSize: maximumBatchSize, onBatchCommitted: onBatchCommitted)
        let store = try SQLiteHistoryStore(configuration: configuration)
        defer { store.close() }
        return try await body(store)
    }
}
