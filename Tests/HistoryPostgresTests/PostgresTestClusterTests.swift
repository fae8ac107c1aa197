import Foundation
import HistoryPostgres
import HistoryTestSupport
import Testing

extension PostgresTests {
    /// The harness itself, on a cluster of its own: the later store tests
    /// restart the server under load, and rely on this.
    @Suite("PostgresTestCluster")
    struct PostgresTestClusterTests {
        @Test func aRestartedServerIsReachedAgainThroughThePool() async throws {
            let folder = try await withPostgresCluster { cluster in
                let pool = PostgresConnectionPool(uri: cluster.uri(), maximumConnections: 2)
                defer { pool.close() }
                let before = try pool.withConnection { connection throws(PostgresError) in connection.backendPID }

                try cluster.stop(mode: .fast)
                let down = try #require(throws: PostgresError.self) {
                    try pool.withConnection { connection throws(PostgresError) in try connection.query("SELECT 1") }
                }
                #expect(down.isTransient)
                let refused = try #require(throws: PostgresError.self) {
                    try pool.withConnection { connection throws(PostgresError) in try connection.query("SELECT 1") }
                }
                #expect(refused.kind == .connectionFailed)

                try cluster.start()
                let after = try pool.withConnection { connection throws(PostgresError) in connection.backendPID }
                #expect(after != before)
                return cluster.directory
            }
            // Stopped and deleted once the body returned.
            #expect(!FileManager.default.fileExists(atPath: folder.path))
        }

        @Test func theClusterIsStoppedAndDeletedWhenTheBodyThrows() async throws {
            struct Expected: Error {}
            let folder = Locked<URL?>(nil)
            await #expect(throws: Expected.self) {
                try await withPostgresCluster { cluster in
                    folder.withLock { $0 = cluster.directory }
                    _ = try PGConnection(uri: cluster.uri())
                    throw Expected()
                }
            }
            let path = try #require(folder.withLock { $0 }).path
            #expect(!FileManager.default.fileExists(atPath: path))
        }
    }
}
