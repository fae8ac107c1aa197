import HistoryStore
import Foundation

/// A fixed set of read-only connections over the WAL file, handed to one
/// thread at a time.
///
/// WAL lets every reader keep its own snapshot while the writer commits, so
/// pages are served in parallel with group commits. A caller that finds every
/// connection busy waits on a condition until one comes back; connections are
/// returned on every path (a `defer` in `read`).
///
/// ```swift
/// let conversation = try pool.read { reader throws(StoreError) in ... }
/// ```
///
/// The use of `@unchecked Sendable` is safe for this type because:
/// - `idle` and `isClosed` are only read or written while `condition` is locked;
/// - a `SQLiteReader` is in exactly one place at a time: in `idle`, or checked
///   out to the one thread running `read`'s body, so no two threads ever use
///   the same (NOMUTEX) connection, or its caches, at once;
/// - a connection checked in after `close()` is closed by that returning
///   thread, which is its only user;
/// - `checkedOut` counts the connections outside `idle`, under `condition`.
final class SQLiteReaderPool: @unchecked Sendable {
    private let condition = NSCondition()
    private var idle: [SQLiteReader]
    private var isClosed = false
    private var checkedOut = 0

    init(connections: [SQLiteConnection]) {
        precondition(!connections.isEmpty, "a reader pool needs at least one connection")
        self.idle = connections.map(SQLiteReader.init)
    }

    /// Runs `body` with a reader of its own; fails `.closed` after `close()`.
    func read<T>(_ body: (SQLiteReader) throws(StoreError) -> T) throws(StoreError) -> T {
        let reader = try checkOut()
        defer { checkIn(reader) }
        return try body(reader)
    }

    /// Closes the idle connections now and waits for the busy ones to come
    /// back (their threads close them), so that when it returns no read is
    /// still running on the file; later reads fail `.closed`. Must not be
    /// called from inside `read` (it would wait for itself).
    func close() {
        condition.lock()
        isClosed = true
        let closing = idle
        idle.removeAll()
        condition.broadcast()
        condition.unlock()
        for reader in closing { reader.connection.close() }
        condition.lock()
        while checkedOut > 0 { condition.wait() }
        condition.unlock()
    }

    private func checkOut() throws(StoreError) -> SQLiteReader {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if isClosed { throw .closed }
            // LIFO: the most recently used connection has the warmest page cache.
            if let reader = idle.popLast() {
                checkedOut += 1
                return reader
            }
            condition.wait()
        }
    }

    private func checkIn(_ reader: SQLiteReader) {
        condition.lock()
        if isClosed {
            condition.unlock()
            reader.connection.close()
            condition.lock()
            checkedOut -= 1
            // `close()` may be waiting for this one.
            condition.broadcast()
            condition.unlock()
            return
        }
        checkedOut -= 1
        idle.append(reader)
        condition.signal()
        condition.unlock()
    }
}
