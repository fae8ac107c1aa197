import HistoryStore
import CSQLite

/// A value that can be bound to a `?` parameter of a statement.
///
/// Only the types the schema uses conform: INTEGER (`Int64`, `Int`, `Bool`),
/// REAL (`Double`), TEXT (`String`) and NULL (`Optional.none`).
///
/// Related SQLite documentation: <https://www.sqlite.org/c3ref/bind_blob.html>
protocol SQLiteBindable {
    /// Binds `self`; returns SQLite's result code.
    func bind(to statement: OpaquePointer, at index: Int32) -> Int32
}

extension Int64: SQLiteBindable {
    func bind(to statement: OpaquePointer, at index: Int32) -> Int32 {
        sqlite3_bind_int64(statement, index, self)
    }
}

extension Int: SQLiteBindable {
    func bind(to statement: OpaquePointer, at index: Int32) -> Int32 {
        sqlite3_bind_int64(statement, index, Int64(self))
    }
}

extension Bool: SQLiteBindable {
    func bind(to statement: OpaquePointer, at index: Int32) -> Int32 {
        sqlite3_bind_int64(statement, index, self ? 1 : 0)
    }
}

extension Double: SQLiteBindable {
    func bind(to statement: OpaquePointer, at index: Int32) -> Int32 {
        sqlite3_bind_double(statement, index, self)
    }
}

extension String: SQLiteBindable {
    func bind(to statement: OpaquePointer, at index: Int32) -> Int32 {
        // The explicit byte count keeps an embedded NUL (valid in JSON as
        // "\u0000") instead of cutting the text there; SQLITE_TRANSIENT makes
        // SQLite copy the bytes before the temporary C string goes away.
        sqlite3_bind_text(statement, index, self, Int32(self.utf8.count), csqlite_transient())
    }
}

extension Optional: SQLiteBindable where Wrapped: SQLiteBindable {
    func bind(to statement: OpaquePointer, at index: Int32) -> Int32 {
        switch self {
        case .none: sqlite3_bind_null(statement, index)
        case .some(let value): value.bind(to: statement, at: index)
        }
    }
}
