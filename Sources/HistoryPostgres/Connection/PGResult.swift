import CLibPQ

/// The rows (or the command tag) of one statement: owns a `PGresult*` and
/// frees it when released.
///
/// Reads decode by the column's format and type, so the same accessor works
/// whether the statement asked for text or binary results: `int64` reads a
/// binary `bigint`, `integer` or `smallint`, or the decimal text of any.
///
/// ```swift
/// let result = try connection.query("SELECT id, body FROM messages WHERE conversation_seq = $1", [.int64(seq)])
/// for row in 0..<result.rowCount { print(result.int64(row, 0), result.string(row, 1)) }
/// ```
///
/// Related PostgreSQL documentation:
/// <https://www.postgresql.org/docs/current/libpq-exec.html#LIBPQ-EXEC-SELECT-INFO>
public final class PGResult {
    private let handle: OpaquePointer

    /// Takes ownership of `handle` (PQclear on release).
    init(handle: OpaquePointer) {
        self.handle = handle
    }

    deinit {
        PQclear(handle)
    }

    public var rowCount: Int { Int(PQntuples(handle)) }
    public var columnCount: Int { Int(PQnfields(handle)) }

    /// The rows an INSERT, UPDATE, DELETE, MERGE, SELECT or COPY touched
    /// (from the command tag); 0 for other commands.
    public var affectedRows: Int {
        Int(String(cString: PQcmdTuples(handle))) ?? 0
    }

    /// The command tag, e.g. `COMMIT`, or `ROLLBACK` for a COMMIT of a
    /// transaction that had failed.
    public var commandTag: String {
        String(cString: PQcmdStatus(handle))
    }

    public func columnName(_ column: Int) -> String {
        String(cString: PQfname(handle, Int32(column)))
    }

    public func isNull(_ row: Int, _ column: Int) -> Bool {
        PQgetisnull(handle, Int32(row), Int32(column)) == 1
    }

    /// The raw bytes of a value: UTF-8 text, or the binary encoding.
    public func bytes(_ row: Int, _ column: Int) -> [UInt8] {
        let length = Int(PQgetlength(handle, Int32(row), Int32(column)))
        guard length > 0, let start = PQgetvalue(handle, Int32(row), Int32(column)) else { return [] }
        return start.withMemoryRebound(to: UInt8.self, capacity: length) {
            Array(UnsafeBufferPointer(start: $0, count: length))
        }
    }

    /// The raw bytes of a value in libpq's own buffer, valid during `body`
    /// only: what a reader copies straight into its rows (the page path)
    /// without an array or a `String` per column.
    public func withUnsafeBytes<R>(_ row: Int, _ column: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        let length = Int(PQgetlength(handle, Int32(row), Int32(column)))
        guard length > 0, let start = PQgetvalue(handle, Int32(row), Int32(column)) else {
            return try body(UnsafeBufferPointer(start: nil, count: 0))
        }
        return try start.withMemoryRebound(to: UInt8.self, capacity: length) {
            try body(UnsafeBufferPointer(start: $0, count: length))
        }
    }

    /// A text value (text and binary formats carry text as the same UTF-8),
    /// or, in binary format, a `bytea` holding UTF-8 (the store's free-text
    /// columns): its bytes as they are, a NUL included. Invalid UTF-8
    /// would read as U+FFFD, but those columns only ever hold a String's.
    public func string(_ row: Int, _ column: Int) -> String {
        withUnsafeBytes(row, column) { String(decoding: $0, as: UTF8.self) }
    }

    public func optionalString(_ row: Int, _ column: Int) -> String? {
        isNull(row, column) ? nil : string(row, column)
    }

    /// An integer column (`bigint`, `integer`, `smallint`).
    /// Reading another type is a bug in the caller's SQL, and traps.
    /// Read in place from libpq's buffer: no array per value (a page reads
    /// a dozen integers a row).
    public func int64(_ row: Int, _ column: Int) -> Int64 {
        withUnsafeBytes(row, column) { bytes in
            guard isBinary(column) else {
                guard let value = Int64(String(decoding: bytes, as: UTF8.self)) else {
                    preconditionFailure("column \(columnName(column)) holds \(String(decoding: bytes, as: UTF8.self)), not an integer")
                }
                return value
            }
            switch PQftype(handle, Int32(column)) {
            case PostgresValue.TypeOID.int8 where bytes.count == 8: return Self.bigEndian(bytes, as: Int64.self)
            case PostgresValue.TypeOID.int4 where bytes.count == 4: return Int64(Self.bigEndian(bytes, as: Int32.self))
            case PostgresValue.TypeOID.int2 where bytes.count == 2: return Int64(Self.bigEndian(bytes, as: Int16.self))
            case let type: preconditionFailure("column \(columnName(column)) has type OID \(type), not an integer")
            }
        }
    }

    public func optionalInt64(_ row: Int, _ column: Int) -> Int64? {
        isNull(row, column) ? nil : int64(row, column)
    }

    /// A `boolean` column.
    public func bool(_ row: Int, _ column: Int) -> Bool {
        withUnsafeBytes(row, column) { bytes in
            isBinary(column) ? bytes.first == 1 : bytes.first == UInt8(ascii: "t")
        }
    }

    private func isBinary(_ column: Int) -> Bool {
        PQfformat(handle, Int32(column)) == 1
    }

    private static func bigEndian<T: FixedWidthInteger>(_ bytes: UnsafeBufferPointer<UInt8>, as type: T.Type) -> T {
        var value: T = 0
        for byte in bytes { value = value << 8 | T(truncatingIfNeeded: byte) }
        return value
    }
}

/// A result is read by the thread that ran the statement; it is not shared.
@available(*, unavailable)
extension PGResult: Sendable {}
