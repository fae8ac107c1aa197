import CSQLite
import Glibc
import HistoryStore

/// Holds a database file for one open store at a time: a second store on
/// the same file (another server process, `history-load seed --direct`
/// beside a running server, a second store in one process) is refused at
/// open with `.storage` (SQLITE_BUSY), before it reads or writes anything.
///
/// Why: an open store keeps in memory what only the file's one writer can
/// know: each conversation's committed version and its members' roles
/// (`KeptVersions`, which answers a 304 without a read), typing, and the
/// wake-ups of long-polls and streams. A second writer would commit behind
/// its back: a 304 for a page that changed, a long-poll asleep through a
/// message. SQLite alone would let both in (WAL serves several processes),
/// so docs/configuration.md's rule, one process per file, is kept here.
///
/// `flock` on the database file itself: on Linux it is independent of
/// SQLite's POSIX (`fcntl`) locks, and the kernel drops it when the process
/// ends however it ends, so a crashed server leaves nothing to clean up.
/// The descriptor stays open until the store's connections are closed,
/// since closing any descriptor of a file drops every POSIX lock the
/// process holds on it, SQLite's included.
final class DatabaseFileLock: @unchecked Sendable {
    /// The open descriptor holding the lock; -1 once released. Written by
    /// `release`, which the store calls once, after its connections closed.
    private var descriptor: Int32

    /// Takes the lock on the (existing) file at `path`, without waiting.
    /// - Throws: `.storage` when another store holds it, or the file cannot be opened.
    init(path: String) throws(StoreError) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw .storage(sqlite: SQLITE_CANTOPEN, message: "cannot open \(path) to lock it: \(Self.reason())")
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let busy = errno == EWOULDBLOCK
            let reason = Self.reason()
            _ = close(descriptor)
            guard busy else {
                throw .storage(sqlite: SQLITE_CANTOPEN, message: "cannot lock \(path): \(reason)")
            }
            throw .storage(sqlite: SQLITE_BUSY, message: "\(path) is open in another store (a server, or a tool "
                + "writing it such as history-load seed --direct): one process serves a SQLite file at a time")
        }
        self.descriptor = descriptor
    }

    deinit {
        release()
    }

    /// Lets another store open the file; call after the connections closed.
    func release() {
        guard descriptor >= 0 else { return }
        _ = close(descriptor)
        descriptor = -1
    }

    private static func reason() -> String {
        String(cString: strerror(errno))
    }
}
