import CSQLite
import HistoryTestSupport
import Testing
@testable import HistorySQLite

/// The settings of the SQLite library itself, made before anything in the
/// process initializes it.
@Suite("SQLite library settings")
struct SQLiteLibraryTests {
    /// Memory statistics are off once a connection has opened: SQLite
    /// counts no allocation, and the setting can no longer be changed (the
    /// library is initialized). With them on, every allocation of every
    /// connection takes one process-wide mutex.
    @Test func memoryStatisticsAreOffOnceAConnectionOpens() throws {
        try withTemporaryDirectory { directory in
            let connection = try SQLiteConnection(path: directory.databasePath)
            defer { connection.close() }
            try connection.execute(sql: "CREATE TABLE t (x TEXT); INSERT INTO t VALUES (hex(randomblob(4096)))")
            #expect(sqlite3_memory_used() == 0)
            #expect(csqlite_disable_memory_statistics() == SQLITE_MISUSE)
        }
    }
}
