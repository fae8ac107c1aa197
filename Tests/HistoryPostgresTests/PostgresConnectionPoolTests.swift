import Dispatch
import HistoryPostgres
import HistoryTestSupport
import Synchronization
import Testing

extension PostgresTests {
    @Suite("PostgresConnectionPool")
    struct PostgresConnectionPoolTests {
        private func backendPID(_ pool: PostgresConnectionPool) throws -> Int32 {
            try pool.withConnection { connection throws(PostgresError) in connection.backendPID }
        }

        @Test func aConnectionIsReusedAfterItReturns() async throws {
            try await withTestDatabase { uri in
                let pool = PostgresConnectionPool(uri: uri, maximumConnections: 4)
                defer { pool.close() }
                let first = try backendPID(pool)
                #expect(try backendPID(pool) == first)
                #expect(pool.openConnections == 1)
            }
        }

        @Test func neverMoreThanTheMaximumAtOnce() async throws {
            try await withTestDatabase { uri in
                let pool = PostgresConnectionPool(uri: uri, maximumConnections: 3)
                defer { pool.close() }
                let borrowed = Mutex((now: 0, most: 0, failures: 0))
                DispatchQueue.concurrentPerform(iterations: 24) { _ in
                    do {
                        try pool.withConnection { connection throws(PostgresError) in
                            borrowed.withLock { $0.now += 1; $0.most = max($0.most, $0.now) }
                            defer { borrowed.withLock { $0.now -= 1 } }
                            try connection.query("SELECT pg_sleep(0.01)")
                        }
                    } catch {
                        borrowed.withLock { $0.failures += 1 }
                    }
                }
                let counts = borrowed.withLock { $0 }
                #expect(counts.failures == 0)
                #expect(counts.most <= 3)
                #expect(pool.openConnections <= 3)
                let sessions = try PGConnection(uri: uri).query(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'history-server'")
                // The pool's (at most 3) and the one asking.
                #expect(sessions.int64(0, 0) <= 4)
            }
        }

        @Test func aLostConnectionIsReplacedByAFreshOne() async throws {
            try await withTestDatabase { uri in
                let pool = PostgresConnectionPool(uri: uri, maximumConnections: 1)
                defer { pool.close() }
                let first = try backendPID(pool)
                let killer = try PGConnection(uri: uri)
                #expect(try killer.query("SELECT pg_terminate_backend($1::integer, 10000)", [.int32(first)]).bool(0, 0))
                let error = try #require(throws: PostgresError.self) {
                    try pool.withConnection { connection throws(PostgresError) in try connection.query("SELECT 1") }
                }
                #expect(error.isTransient)
                #expect(pool.openConnections == 0)
                let second = try backendPID(pool)
                #expect(second != first)
                #expect(try pool.withConnection { connection throws(PostgresError) in
                    try connection.query("SELECT 41 + 1").int64(0, 0)
                } == 42)
            }
        }

        @Test func aConnectionLeftInATransactionIsNotHandedOut() async throws {
            try await withTestDatabase { uri in
                let pool = PostgresConnectionPool(uri: uri, maximumConnections: 1)
                defer { pool.close() }
                let first = try pool.withConnection { connection throws(PostgresError) in
                    try connection.execute(sql: "BEGIN")
                    return connection.backendPID
                }
                let next = try pool.withConnection { connection throws(PostgresError) in
                    (connection.backendPID, connection.transactionStatus)
                }
                #expect(next.0 != first)
                #expect(next.1 == .idle)
            }
        }

        @Test func aClosedPoolRefuses() async throws {
            try await withTestDatabase { uri in
                let pool = PostgresConnectionPool(uri: uri, maximumConnections: 2)
                _ = try backendPID(pool)
                pool.close()
                #expect(pool.openConnections == 0)
                let error = try #require(throws: PostgresError.self) { try backendPID(pool) }
                #expect(error.kind == .connectionLost)
            }
        }
    }
}
