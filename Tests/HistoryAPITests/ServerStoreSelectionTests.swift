import HistoryAPI
import HistoryTestSupport
import HistoryWiring
import Testing

/// `HISTORY_TEST_STORE` decides what every in-process server of the HTTP
/// suites runs on; a run meant for PostgreSQL that silently fell back to
/// SQLite would pass while testing nothing of PostgreSQL.
@Suite("The servers of the tests run on the store HISTORY_TEST_STORE names")
struct ServerStoreSelectionTests {
    @Test func theServersStoreIsTheSelectedOne() throws {
        try withRunningServer { server in
            let store = String(describing: type(of: server.application.store))
            switch StoreBackend.forServers {
            case .sqlite:
                #expect(store == "SQLiteHistoryStore")
                #expect(server.databasePath.hasSuffix(".sqlite"))
            case .postgres:
                #expect(store == "PostgresHistoryStore")
                #expect(server.databasePath.hasPrefix("postgresql://"))
            }
            // A second server gets a database of its own.
            try withRunningServer { other in
                #expect(other.databasePath != server.databasePath)
            }
        }
    }
}
