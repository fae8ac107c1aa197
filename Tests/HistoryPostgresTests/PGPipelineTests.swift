import Foundation
import HistoryPostgres
import HistoryTestSupport
import Testing

extension PostgresTests {
    /// `PGConnection.pipeline`: many statements, one Sync, one round trip,
    /// with the failure rules of PostgreSQL's extended protocol.
    @Suite("PGConnection pipeline")
    struct PGPipelineTests {
        @Test func statementsRunInOrderAndCachedOnesArePreparedOnce() async throws {
            try await withTestDatabase { uri in
                let connection = try PGConnection(uri: uri)
                try connection.execute(sql: "CREATE TABLE t (n bigint PRIMARY KEY, label text)")
                for round in 0..<2 {
                    let results = try connection.pipeline([
                        PGPipelineStatement("INSERT INTO t VALUES ($1, $2)", [.int64(Int64(round * 2)), .text("a")]),
                        PGPipelineStatement("INSERT INTO t VALUES ($1, $2)", [.int64(Int64(round * 2 + 1)), .text("b")]),
                        PGPipelineStatement("SELECT count(*), max(n) FROM t"),
                        PGPipelineStatement("SELECT $1::bigint * 2", [.int64(21)], cached: false, resultFormat: .text),
                    ])
                    #expect(results.count == 4)
                    #expect(results[0].affectedRows == 1)
                    // The third sees the first two: they ran in order.
                    #expect(results[2].int64(0, 0) == Int64(round * 2 + 2))
                    #expect(results[2].int64(0, 1) == Int64(round * 2 + 1))
                    #expect(results[3].string(0, 0) == "42")
                }
                // The two cached texts were prepared once, in the first pipeline,
                // the uncached one never; cachedStatement finds them.
                #expect(try connection.query("SELECT count(*) FROM pg_prepared_statements").int64(0, 0) == 2)
                let cached = try connection.cachedStatement(sql: "SELECT count(*), max(n) FROM t")
                #expect(try connection.execute(cached).int64(0, 0) == 4)
                #expect(try connection.query("SELECT count(*) FROM pg_prepared_statements").int64(0, 0) == 2)
                #expect(connection.transactionStatus == .idle)
            }
        }

        @Test func aFailureSkipsTheRestAndRollsBackAnImplicitTransaction() async throws {
            try await withTestDatabase { uri in
                let connection = try PGConnection(uri: uri)
                try connection.execute(sql: "CREATE TABLE t (n bigint PRIMARY KEY)")
                do throws(PostgresError) {
                    _ = try connection.pipeline([
                        PGPipelineStatement("INSERT INTO t VALUES ($1)", [.int64(1)]),
                        PGPipelineStatement("INSERT INTO t VALUES ($1)", [.int64(1)]),
                        PGPipelineStatement("INSERT INTO t VALUES ($1)", [.int64(3)]),
                    ])
                    Issue.record("a duplicate key was accepted")
                } catch {
                    #expect(error.kind == .uniqueViolation)
                    #expect(error.sql == "INSERT INTO t VALUES ($1)")
                }
                // No BEGIN: the pipeline was one implicit transaction, undone whole.
                #expect(connection.transactionStatus == .idle)
                #expect(try connection.query("SELECT count(*) FROM t").int64(0, 0) == 0)
                #expect(!connection.isBroken)
                #expect(try connection.pipeline([PGPipelineStatement("SELECT 7::bigint")])[0].int64(0, 0) == 7)
            }
        }

        @Test func aFailureInsideBEGINLeavesTheTransactionFailedForTheCaller() async throws {
            try await withTestDatabase { uri in
                let connection = try PGConnection(uri: uri)
                try connection.execute(sql: "CREATE TABLE t (n bigint PRIMARY KEY)")
                do throws(PostgresError) {
                    _ = try connection.pipeline([
                        PGPipelineStatement("BEGIN", cached: false),
                        PGPipelineStatement("INSERT INTO t VALUES ($1)", [.int64(1)]),
                        PGPipelineStatement("SELECT 1 / $1::bigint", [.int64(0)]),
                        PGPipelineStatement("COMMIT", cached: false),
                    ])
                    Issue.record("a division by zero succeeded")
                } catch {
                    #expect(error.sqlState == "22012")
                }
                // The COMMIT was skipped: the caller rolls back, as after any failure.
                #expect(connection.transactionStatus == .failedTransaction)
                try connection.execute(sql: "ROLLBACK")
                #expect(try connection.query("SELECT count(*) FROM t").int64(0, 0) == 0)
            }
        }

        @Test func aConnectionBrokenMidPipelineIsLostAndClosed() async throws {
            try await withTestDatabase { uri in
                let connection = try PGConnection(uri: uri)
                try connection.execute(sql: "CREATE TABLE t (n bigint PRIMARY KEY)")
                do throws(PostgresError) {
                    _ = try connection.pipeline([
                        PGPipelineStatement("INSERT INTO t VALUES ($1)", [.int64(1)]),
                        PGPipelineStatement("SELECT pg_terminate_backend(pg_backend_pid())"),
                        PGPipelineStatement("INSERT INTO t VALUES ($1)", [.int64(2)]),
                    ])
                    Issue.record("a pipeline on a terminated session succeeded")
                } catch {
                    #expect(error.kind == .connectionLost)
                }
                #expect(connection.isBroken)
                do throws(PostgresError) {
                    _ = try connection.pipeline([PGPipelineStatement("SELECT 1")])
                    Issue.record("a closed connection ran a pipeline")
                } catch {
                    #expect(error.kind == .connectionLost)
                }
                let other = try PGConnection(uri: uri)
                #expect(try other.query("SELECT count(*) FROM t").int64(0, 0) == 0)
            }
        }

        /// Far more than the socket buffers hold, both ways: sending does
        /// not wait for the server, which meanwhile writes its answers.
        @Test func aLongPipelineWithLargeResultsDoesNotDeadlock() async throws {
            try await withTestDatabase { uri in
                let connection = try PGConnection(uri: uri)
                let payload = String(repeating: "x", count: 64 * 1024)
                let statements = (0..<200).map { index in
                    PGPipelineStatement("SELECT $1::bigint, repeat($2::text, 4)", [.int64(Int64(index)), .text(payload)])
                }
                let results = try connection.pipeline(statements)
                #expect(results.map { $0.int64(0, 0) } == (0..<200).map(Int64.init))
                #expect(results.allSatisfy { $0.string(0, 1).utf8.count == 4 * payload.utf8.count })
            }
        }
    }
}
