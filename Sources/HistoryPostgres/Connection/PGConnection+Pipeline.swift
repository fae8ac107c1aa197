import CLibPQ
#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// One statement of a pipeline (`PGConnection.pipeline`).
public struct PGPipelineStatement {
    let sql: String
    let parameters: [PostgresValue]
    /// Prepared once per session (`PGConnection.cachedStatement`) instead
    /// of parsed and planned on every run.
    let cached: Bool
    let resultFormat: PGConnection.ResultFormat

    /// - Parameters:
    ///   - cached: prepare it on the session at its first use (in the same
    ///     pipeline) and run it prepared from then on, as `cachedStatement`.
    ///     An uncached statement is parsed on every run, which a statement
    ///     whose text changes from run to run needs.
    public init(_ sql: String, _ parameters: [PostgresValue] = [], cached: Bool = true,
                resultFormat: PGConnection.ResultFormat = .binary) {
        self.sql = sql
        self.parameters = parameters
        self.cached = cached
        self.resultFormat = resultFormat
    }
}

extension PGConnection {
    /// Sends `statements` in libpq's pipeline mode, with one Sync after
    /// the last, and returns their results in order: one round trip for the
    /// lot, where one statement at a time costs a round trip each. The
    /// server runs them in order, as if they had been sent one by one.
    ///
    /// Failures, as PostgreSQL's extended protocol has them: the first
    /// statement that fails is thrown (its SQLSTATE and SQL), and every
    /// statement after it up to the Sync is skipped by the server, so
    /// nothing after a failure runs. Statements that ran before it stay
    /// done: inside an explicit transaction (a `BEGIN` earlier in this
    /// pipeline or before), the transaction is left failed, for the caller
    /// to roll back as after any failed statement; outside one, the
    /// pipeline was one implicit transaction and is rolled back whole. A
    /// connection that broke mid-pipeline is closed (`isBroken`, so a pool
    /// drops it) and `.connectionLost` is thrown: whatever the server did
    /// of it is unknown, a `COMMIT` in it included.
    ///
    /// Sending never blocks on the server's answers: the socket is written
    /// in non-blocking mode, reading what comes back meanwhile, so a long
    /// pipeline whose early results fill the socket's buffers cannot
    /// deadlock (both sides waiting for the other to read).
    ///
    /// Only extended-protocol statements are allowed here: one statement per
    /// entry (no `;`-separated string), `BEGIN` and `COMMIT` included.
    ///
    /// ```swift
    /// let results = try connection.pipeline([
    ///     PGPipelineStatement("BEGIN", cached: false),
    ///     PGPipelineStatement("SELECT seq FROM conversations WHERE id = $1 FOR UPDATE", [.text("general")]),
    ///     PGPipelineStatement("SELECT count(*) FROM members WHERE conversation_seq = $1", [.int64(7)]),
    /// ])
    /// ```
    ///
    /// Related PostgreSQL documentation:
    /// <https://www.postgresql.org/docs/current/libpq-pipeline-mode.html>
    public func pipeline(_ statements: [PGPipelineStatement]) throws(PostgresError) -> [PGResult] {
        guard let handle = rawHandle else {
            throw PostgresError(kind: .connectionLost, message: "the connection is closed")
        }
        guard !statements.isEmpty else { return [] }
        guard PQenterPipelineMode(handle) == 1 else {
            throw PostgresError(kind: isBroken ? .connectionLost : .client,
                                message: "could not enter pipeline mode: " + Self.trimmed(String(cString: PQerrorMessage(handle))))
        }
        var expected: [PipelineReply] = []
        var preparing: [String: String] = [:]
        for (index, statement) in statements.enumerated() {
            var name: String?
            if statement.cached {
                if let known = prepared[statement.sql]?.name ?? preparing[statement.sql] {
                    name = known
                } else {
                    let new = "s\(prepared.count + preparing.count + 1)"
                    guard PQsendPrepare(handle, new, statement.sql, 0, nil) == 1 else {
                        throw abandon(handle, sql: statement.sql)
                    }
                    preparing[statement.sql] = new
                    expected.append(.prepared(sql: statement.sql, name: new))
                    name = new
                }
            }
            let encoded = EncodedParameters(statement.parameters)
            let sent = encoded.withArrays { types, values, lengths, formats in
                if let name {
                    PQsendQueryPrepared(handle, name, encoded.count, values, lengths, formats, statement.resultFormat.rawValue)
                } else {
                    PQsendQueryParams(handle, statement.sql, encoded.count, types, values, lengths, formats,
                                      statement.resultFormat.rawValue)
                }
            }
            guard sent == 1 else { throw abandon(handle, sql: statement.sql) }
            expected.append(.statement(index))
        }
        guard PQpipelineSync(handle) == 1 else { throw abandon(handle, sql: statements[0].sql) }
        try flushPipeline(handle, sql: statements[0].sql)

        var results: [PGResult?] = Array(repeating: nil, count: statements.count)
        var firstFailure: PostgresError?
        for reply in expected {
            let sql = reply.sql(in: statements)
            var outcome: OpaquePointer?
            // Each statement's results end with a NULL.
            while let result = PQgetResult(handle) {
                if let outcome { PQclear(outcome) }
                outcome = result
            }
            guard let outcome else { throw abandon(handle, sql: sql) }
            switch PQresultStatus(outcome) {
            case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
                switch reply {
                case .prepared(let sql, let name):
                    prepared[sql] = PGPreparedStatement(name: name, sql: sql)
                    PQclear(outcome)
                case .statement(let index):
                    results[index] = PGResult(handle: outcome)
                }
            case PGRES_PIPELINE_ABORTED:
                PQclear(outcome)
            default:
                let broken = PQstatus(handle) != CONNECTION_OK
                let error = Self.error(from: outcome, connectionBroken: broken, sql: sql)
                PQclear(outcome)
                if broken { throw abandon(handle, sql: sql, error: error) }
                firstFailure = firstFailure ?? error
            }
        }
        // The Sync's own result, then back to one statement at a time.
        guard let sync = PQgetResult(handle) else { throw abandon(handle, sql: statements[0].sql) }
        let synced = PQresultStatus(sync) == PGRES_PIPELINE_SYNC
        PQclear(sync)
        guard synced, PQexitPipelineMode(handle) == 1 else { throw abandon(handle, sql: statements[0].sql) }
        if let firstFailure { throw firstFailure }
        // Skipped only after a failure, so each statement has its result.
        let complete = results.compactMap { $0 }
        guard complete.count == statements.count else {
            throw PostgresError(kind: .client, message: "a pipeline statement was skipped without a failure before it")
        }
        return complete
    }

    /// A result the pipeline waits for: a statement's, or the preparation
    /// of a cached statement at its first use.
    private enum PipelineReply {
        case prepared(sql: String, name: String)
        case statement(Int)

        func sql(in statements: [PGPipelineStatement]) -> String {
            switch self {
            case .prepared(let sql, _): sql
            case .statement(let index): statements[index].sql
            }
        }
    }

    /// Writes everything queued, reading the server's answers as they come
    /// so neither side waits on a full buffer; then the socket is back to
    /// blocking for reading the results.
    private func flushPipeline(_ handle: OpaquePointer, sql: String) throws(PostgresError) {
        guard PQsetnonblocking(handle, 1) == 0 else { throw abandon(handle, sql: sql) }
        while true {
            let flushed = PQflush(handle)
            if flushed == 0 { break }
            guard flushed == 1 else { throw abandon(handle, sql: sql) }
            var descriptor = pollfd(fd: PQsocket(handle), events: Int16(POLLIN | POLLOUT), revents: 0)
            let ready = poll(&descriptor, 1, -1)
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { throw abandon(handle, sql: sql) }
            if descriptor.revents & Int16(POLLIN) != 0 {
                guard PQconsumeInput(handle) == 1 else { throw abandon(handle, sql: sql) }
            }
        }
        guard PQsetnonblocking(handle, 0) == 0 else { throw abandon(handle, sql: sql) }
    }

    /// A pipeline that cannot be finished: the session is closed (its state
    /// mid-pipeline is unknown, and a pool must not hand it out again), and
    /// the error to throw is returned.
    private func abandon(_ handle: OpaquePointer, sql: String, error: PostgresError? = nil) -> PostgresError {
        let broken = PQstatus(handle) != CONNECTION_OK
        let message = Self.trimmed(String(cString: PQerrorMessage(handle)))
        close()
        if let error { return error }
        return PostgresError(kind: broken ? .connectionLost : .client,
                             message: message.isEmpty ? "the pipeline could not be completed" : message, sql: sql)
    }
}
