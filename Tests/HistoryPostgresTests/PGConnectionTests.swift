import Foundation
import HistoryPostgres
import HistoryTestSupport
import Testing

extension PostgresTests {
    @Suite("PGConnection")
    struct PGConnectionTests {
        @Test func connectsOverTheSocketAndOverTCP() async throws {
            try await withTestDatabase { uri in
                let connection = try PGConnection(uri: uri)
                #expect(try connection.query("SELECT current_database() = $1", [.text(databaseName(uri))]).bool(0, 0))
                #expect(connection.backendPID > 0)
                #expect(connection.transactionStatus == .idle)
                let cluster = try #require(PostgresTestCluster.current)
                let overTCP = try PGConnection(uri: cluster.tcpURI())
                #expect(try overTCP.query("SELECT inet_server_addr()::text", resultFormat: .text).string(0, 0) == "127.0.0.1/32")
                #expect(try connection.query("SHOW client_encoding", resultFormat: .text).string(0, 0) == "UTF8")
            }
        }

        /// A peer that vanishes without closing must be noticed: TCP
        /// keepalives are on unless the URI says otherwise.
        @Test func keepalivesAreOnByDefaultAndTheURIMayChangeThem() async throws {
            try await withTestDatabase { _ in
                let cluster = try #require(PostgresTestCluster.current)
                let byDefault = try PGConnection(uri: cluster.tcpURI())
                #expect(byDefault.connectionOption("keepalives") == "1")
                #expect(byDefault.connectionOption("keepalives_idle") == "15")
                #expect(byDefault.connectionOption("keepalives_count") == "3")
                let tuned = try PGConnection(uri: cluster.tcpURI() + (cluster.tcpURI().contains("?") ? "&" : "?") + "keepalives_idle=42")
                #expect(tuned.connectionOption("keepalives_idle") == "42")
            }
        }

        @Test func parametersAndResultsRoundTripInBothFormats() async throws {
            try await withTestDatabase { uri in
                let connection = try PGConnection(uri: uri)
                let text = "héllo \"wörld\" ✓\n'; DROP TABLE x; --"
                let bytes: [UInt8] = [0, 1, 2, 0xFF, 0x5C, 0x78]
                for format in [PGConnection.ResultFormat.binary, .text] {
                    let result = try connection.query(
                        "SELECT $1::bigint, $2::integer, $3::text, $4::boolean, $5::bytea, $6::text, $7::bigint, $8::smallint",
                        [.int64(Int64.min), .int32(-42), .text(text), .bool(true), .bytes(bytes), nil, .int64(Int64.max), "-7"],
                        resultFormat: format)
                    #expect(result.rowCount == 1)
                    #expect(result.columnCount == 8)
                    #expect(result.int64(0, 0) == Int64.min)
                    #expect(result.int64(0, 1) == -42)
                    #expect(result.string(0, 2) == text)
                    #expect(result.bool(0, 3))
                    if format == .binary { #expect(result.bytes(0, 4) == bytes) }
                    #expect(result.isNull(0, 5))
                    #expect(result.optionalString(0, 5) == nil)
                    #expect(result.int64(0, 6) == Int64.max)
                    #expect(result.int64(0, 7) == -7)
                }
            }
        }

        @Test func preparedStatementsArePreparedOncePerSession() async throws {
            try await withTestDatabase { uri in
                let connection = try PGConnection(uri: uri)
                try connection.execute(sql: "CREATE TABLE items (id bigint PRIMARY KEY, name text NOT NULL)")
                let insert = try connection.cachedStatement(sql: "INSERT INTO items VALUES ($1, $2)")
                #expect(try connection.cachedStatement(sql: "INSERT INTO items VALUES ($1, $2)") == insert)
                for id in 1...5 {
                    #expect(try connection.execute(insert, [.int64(Int64(id)), .text("item \(id)")]).affectedRows == 1)
                }
                let prepared = try connection.query("SELECT count(*) FROM pg_prepared_statements WHERE name = $1", [.text(insert.name)])
                #expect(prepared.int64(0, 0) == 1)
                let select = try connection.prepare(sql: "SELECT name FROM items WHERE id > $1 ORDER BY id", name: "names_after")
                let names = try connection.execute(select, [.int64(3)])
                #expect((0..<names.rowCount).map { names.string($0, 0) } == ["item 4", "item 5"])
            }
        }

        @Test func aDuplicateKeyIsAUniqueViolationNamingItsConstraint() async throws {
            try await withTestDatabase { uri in
                let connection = try PGConnection(uri: uri)
                try connection.execute(sql: "CREATE TABLE items (id bigint PRIMARY KEY)")
                try connection.query("INSERT INTO items VALUES ($1)", [.int64(1)])
                let error = try #require(throws: PostgresError.self) {
                    try connection.query("INSERT INTO items VALUES ($1)", [.int64(1)])
                }
                #expect(error.kind == .uniqueViolation)
                #expect(error.sqlState == "23505")
                #expect(error.constraint == "items_pkey")
                #expect(error.detail?.contains("(id)=(1)") == true)
                #expect(!error.isTransient)
                // The connection is still good after a statement error.
                #expect(!connection.isBroken)
                #expect(try connection.query("SELECT count(*) FROM items").int64(0, 0) == 1)
            }
        }

        @Test func aLostRaceAtRepeatableReadIsATransientSerializationFailure() async throws {
            try await withTestDatabase { uri in
                let first = try PGConnection(uri: uri)
                let second = try PGConnection(uri: uri)
                try first.execute(sql: "CREATE TABLE counters (id integer PRIMARY KEY, value bigint NOT NULL); INSERT INTO counters VALUES (1, 0)")
                let error = try #require(throws: PostgresError.self) {
                    try first.transaction(isolation: .repeatableRead) { () throws(PostgresError) in
                        // The snapshot is taken here, before the other write commits.
                        _ = try first.query("SELECT value FROM counters WHERE id = 1")
                        try second.execute(sql: "UPDATE counters SET value = value + 1 WHERE id = 1")
                        try first.execute(sql: "UPDATE counters SET value = value + 10 WHERE id = 1")
                    }
                }
                #expect(error.kind == .serializationFailure)
                #expect(error.sqlState == "40001")
                #expect(error.isTransient)
                #expect(first.transactionStatus == .idle)
                #expect(try first.query("SELECT value FROM counters").int64(0, 0) == 1)
            }
        }

        @Test func sqlStatesMapToKinds() {
            #expect(PostgresError.kind(forSQLState: "23505") == .uniqueViolation)
            #expect(PostgresError.kind(forSQLState: "40001") == .serializationFailure)
            #expect(PostgresError.kind(forSQLState: "40P01") == .deadlockDetected)
            #expect(PostgresError.kind(forSQLState: "53100") == .diskFull)
            #expect(PostgresError.kind(forSQLState: "08006") == .connectionLost)
            #expect(PostgresError.kind(forSQLState: "57P01") == .serverUnavailable)
            #expect(PostgresError.kind(forSQLState: "42601") == .other)
            #expect(PostgresError(kind: .diskFull, sqlState: "53100", message: "").isStorageFull)
            #expect(!PostgresError(kind: .diskFull, sqlState: "53100", message: "").isTransient)
            #expect(PostgresError(kind: .serializationFailure, message: "").isTransient)
        }

        @Test func aFailedTransactionIsRolledBack() async throws {
            try await withTestDatabase { uri in
                let connection = try PGConnection(uri: uri)
                try connection.execute(sql: "CREATE TABLE items (id bigint PRIMARY KEY)")
                #expect(throws: PostgresError.self) {
                    try connection.transaction { () throws(PostgresError) in
                        try connection.query("INSERT INTO items VALUES (1)")
                        try connection.query("INSERT INTO items VALUES (1)")
                    }
                }
                #expect(connection.transactionStatus == .idle)
                #expect(try connection.query("SELECT count(*) FROM items").int64(0, 0) == 0)
                try connection.transaction { () throws(PostgresError) in
                    try connection.query("INSERT INTO items VALUES (2)")
                }
                #expect(try connection.query("SELECT count(*) FROM items").int64(0, 0) == 1)
            }
        }

        @Test func aTerminatedBackendIsALostConnectionAndTransient() async throws {
            try await withTestDatabase { uri in
                let victim = try PGConnection(uri: uri)
                let killer = try PGConnection(uri: uri)
                let terminated = try killer.query("SELECT pg_terminate_backend($1::integer, 10000)", [.int32(victim.backendPID)])
                #expect(terminated.bool(0, 0))
                let error = try #require(throws: PostgresError.self) {
                    try victim.query("SELECT 1")
                }
                #expect(error.kind == .connectionLost)
                #expect(error.isTransient)
                #expect(victim.isBroken)
                // Nothing more goes through it, and the error says so again.
                let again = try #require(throws: PostgresError.self) { try victim.query("SELECT 1") }
                #expect(again.kind == .connectionLost)
            }
        }

        @Test func aNotificationReachesTheListenerWhenItsSocketIsReadable() async throws {
            try await withTestDatabase { uri in
                let listener = try PGConnection(uri: uri)
                let sender = try PGConnection(uri: uri)
                try listener.execute(sql: "LISTEN new_messages")
                #expect(listener.nextNotification() == nil)
                try sender.query("SELECT pg_notify($1, $2)", [.text("new_messages"), .text("c1:42")])
                // Up to 30 s for the bytes to arrive: a bound, not a measurement.
                var descriptor = pollfd(fd: listener.socketDescriptor, events: Int16(POLLIN), revents: 0)
                #expect(poll(&descriptor, 1, 30_000) == 1)
                try listener.consumeInput()
                #expect(listener.nextNotification()
                    == PGNotification(channel: "new_messages", payload: "c1:42", senderPID: sender.backendPID))
                #expect(listener.nextNotification() == nil)

                let killer = try PGConnection(uri: uri)
                #expect(try killer.query("SELECT pg_terminate_backend($1::integer, 10000)", [.int32(listener.backendPID)]).bool(0, 0))
                // The server's goodbye and the end of the stream may come in
                // separate reads: read until the connection reports it broke.
                var lost: PostgresError?
                for _ in 0..<5 where lost == nil {
                    guard poll(&descriptor, 1, 30_000) == 1 else { break }
                    do throws(PostgresError) { try listener.consumeInput() } catch { lost = error }
                }
                #expect(lost?.kind == .connectionLost)
                #expect(listener.isBroken)
            }
        }

        @Test func nothingListeningIsAConnectionFailure() async throws {
            let cluster = try #require(PostgresTestCluster.current)
            let error = try #require(throws: PostgresError.self) {
                try PGConnection(uri: "postgresql://postgres@/postgres?host=\(cluster.directory.path)&port=1")
            }
            #expect(error.kind == .connectionFailed)
            #expect(error.isTransient)
            #expect(!error.message.isEmpty)
        }
    }
}

/// The database a URI made by the test cluster names.
func databaseName(_ uri: String) -> String {
    let path = uri.split(separator: "?")[0]
    return String(path.split(separator: "/").last ?? "")
}
