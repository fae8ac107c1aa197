import CLibPQ

/// `COPY ... FROM STDIN`: rows streamed to the server in one statement, the
/// fastest way into a table (no per-row parse, plan or round trip). The
/// seeder (`history-load seed --direct postgres://...`) loads millions of
/// messages this way.
///
/// ```swift
/// try connection.beginCopy(sql: "COPY messages (conversation_seq, id, ...) FROM STDIN")
/// var rows = PostgresCopyRows()
/// rows.append(seq); rows.append(id); ...; rows.endRow()
/// try connection.putCopyData(rows.bytes)
/// let copied = try connection.endCopy()   // rows copied
/// ```
///
/// Between `beginCopy` and `endCopy` the session takes nothing else; a
/// failure ends the COPY (and fails the transaction around it).
///
/// Related PostgreSQL documentation:
/// <https://www.postgresql.org/docs/current/libpq-copy.html>
extension PGConnection {
    /// Sends a `COPY ... FROM STDIN` statement (text format unless it says
    /// otherwise) and waits for the server to accept data.
    public func beginCopy(sql: String) throws(PostgresError) {
        let handle = try copyHandle(sql: sql)
        guard let result = PQexec(handle, sql) else {
            throw PostgresError(kind: isBroken ? .connectionLost : .client,
                                message: Self.trimmed(String(cString: PQerrorMessage(handle))), sql: sql)
        }
        defer { PQclear(result) }
        guard PQresultStatus(result) == PGRES_COPY_IN else {
            throw Self.error(from: result, connectionBroken: isBroken, sql: sql)
        }
    }

    /// Sends rows already encoded in the COPY's format. Blocks while libpq's
    /// buffer is full (the connection is in blocking mode).
    public func putCopyData(_ bytes: [UInt8]) throws(PostgresError) {
        guard !bytes.isEmpty else { return }
        let handle = try copyHandle(sql: "COPY data")
        let sent = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { PQputCopyData(handle, $0.baseAddress, Int32($0.count)) }
        }
        guard sent == 1 else {
            throw PostgresError(kind: isBroken ? .connectionLost : .client,
                                message: Self.trimmed(String(cString: PQerrorMessage(handle))), sql: "COPY data")
        }
    }

    /// Ends the data and reads the COPY's outcome: the rows copied, or the
    /// server's refusal (a duplicate key, a malformed row) as a
    /// `PostgresError` of the usual kinds.
    @discardableResult
    public func endCopy() throws(PostgresError) -> Int {
        let handle = try copyHandle(sql: "COPY end")
        guard PQputCopyEnd(handle, nil) == 1 else {
            throw PostgresError(kind: isBroken ? .connectionLost : .client,
                                message: Self.trimmed(String(cString: PQerrorMessage(handle))), sql: "COPY end")
        }
        // The COPY's own result, then a NULL; every result must be read
        // before the session takes the next statement.
        var failure: PostgresError?
        var copied = 0
        while let result = PQgetResult(handle) {
            if failure == nil {
                if PQresultStatus(result) == PGRES_COMMAND_OK {
                    copied = Int(String(cString: PQcmdTuples(result))) ?? 0
                } else {
                    failure = Self.error(from: result, connectionBroken: isBroken, sql: "COPY")
                }
            }
            PQclear(result)
        }
        if let failure { throw failure }
        if isBroken { throw PostgresError(kind: .connectionLost, message: "the connection was lost during COPY", sql: "COPY") }
        return copied
    }

    private func copyHandle(sql: String) throws(PostgresError) -> OpaquePointer {
        guard let handle = rawHandle else {
            throw PostgresError(kind: .connectionLost, message: "the connection is closed", sql: sql)
        }
        return handle
    }
}
