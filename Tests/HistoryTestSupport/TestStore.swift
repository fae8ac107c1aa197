import HistoryPostgres
import HistoryStore
import Testing

/// Which `HistoryStore` a conformance test runs on: the same test, the same
/// expectations, so the two stores keep one contract.
public enum StoreBackend: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// `SQLiteHistoryStore` on a file in a temporary folder.
    case sqlite
    /// `PostgresHistoryStore` on a new database in the suite's throwaway
    /// cluster: the suite needs the `.postgresCluster` trait.
    case postgres

    public var testDescription: String { rawValue }
}

/// Runs `body` with a new, empty store of `backend` (`durability` is
/// SQLite's; PostgreSQL's is the server's own settings); the store is closed
/// (and its folder or database left behind for the cluster to remove)
/// whatever `body` does.
@discardableResult
public func withTestStore<T>(
    _ backend: StoreBackend,
    durability: Durability = .normal,
    maximumBatchSize: Int = 512,
    onBatchCommitted: (@Sendable (Int) -> Void)? = nil,
    _ body: (any HistoryStore) async throws -> T
) async throws -> T {
    switch backend {
    case .sqlite:
        return try await withTemporaryStore(durability: durability, maximumBatchSize: maximumBatchSize, onBatchCommitted: onBatchCommitted) { store in
            try await body(store)
        }
    case .postgres:
        return try await withTestDatabase { uri in
            let store = try PostgresHistoryStore(configuration: PostgresStoreConfiguration(
                uri: uri, readerCount: 4, maximumBatchSize: maximumBatchSize, onBatchCommitted: onBatchCommitted))
            defer { store.close() }
            return try await body(store)
        }
    }
}

extension HistoryStore {
    /// The bulk loader of either store (not part of the protocol: it is for
    /// seeding, not for the server).
    @discardableResult
    public func bulkLoad(_ messages: [NewMessage], to conversation: ConversationID) throws(StoreError) -> ClosedRange<Int64>? {
        if let store = self as? SQLiteHistoryStore { return try store.bulkAppend(messages, to: conversation) }
        if let store = self as? PostgresHistoryStore { return try store.bulkAppend(messages, to: conversation) }
        preconditionFailure("no bulk loader for \(type(of: self))")
    }
}
