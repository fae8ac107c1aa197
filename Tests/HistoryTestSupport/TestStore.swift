import Foundation
import HistoryPostgres
import HistoryStore
import HistorySQLite
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

    /// The store every server of `withRunningServer` (and the other
    /// in-process server helpers) runs on in this test process:
    /// `HISTORY_TEST_STORE=postgres` runs the whole HTTP suite on
    /// PostgreSQL, one database per server in the process's shared cluster;
    /// unset or `sqlite`, on SQLite files. Anything else stops the run: a
    /// typo must not pass as a SQLite run.
    public static let forServers: StoreBackend = {
        let value = ProcessInfo.processInfo.environment["HISTORY_TEST_STORE"] ?? ""
        if value.isEmpty { return .sqlite }
        guard let backend = StoreBackend(rawValue: value) else {
            fatalError("HISTORY_TEST_STORE=\(value): expected sqlite or postgres")
        }
        return backend
    }()

    /// Whether the servers run on SQLite: `.enabled(if: StoreBackend.serversUseSQLite, "...")`
    /// for the tests that are about SQLite itself (its file, its pragmas).
    public static var serversUseSQLite: Bool { forServers == .sqlite }
}

/// Where a server of the tests keeps its data: `directory`'s SQLite file,
/// or a new, empty database in the process's shared PostgreSQL cluster when
/// the run is on PostgreSQL (`StoreBackend.forServers`).
public func serverDatabase(in directory: URL) throws -> String {
    switch StoreBackend.forServers {
    case .sqlite: directory.appendingPathComponent("history.sqlite").path
    case .postgres: try PostgresTestCluster.shared().createDatabase()
    }
}

/// Runs `body` with a new, empty store of `backend` (`durability` is
/// SQLite's; PostgreSQL's is the server's own settings); the store is closed
/// (and its folder or database left behind for the cluster to remove)
/// whatever `body` does.
@discardableResult
public func withTestStore<T>(
    _ backend: StoreBackend,
    durability: SQLiteDurability = .normal,
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
