import HistoryStore
import CSQLite
import Foundation

/// Keeps the history private to the user the store runs as: the folders it
/// creates are 0700, the database file 0600, whatever the process's umask.
///
/// Why by hand: SQLite creates a missing database file with 0644 less the
/// umask, so under the usual umask 022 every local user could read all the
/// history. It creates the `-wal` and `-shm` files with the main file's
/// mode (and sets exactly that mode on them, ignoring the umask), so making
/// the main file 0600 before SQLite opens it makes those 0600 too.
///
/// An existing database file, `-wal` or `-shm` that other users may read or
/// write is made private at open, and reported so the operator learns of
/// it (a file that is not a SQLite database is left for SQLite to refuse). Existing folders are left alone: the database may sit in a shared
/// folder (`/tmp`, a home) whose mode is not the store's to change.
enum PrivateFiles {
    static let folderMode: mode_t = 0o700
    static let fileMode: mode_t = 0o600

    /// Creates what is missing of the database's folder and the file
    /// itself, and takes group and other permissions off the database's
    /// existing files.
    /// - Returns: one line per file whose mode was changed, for the log.
    /// - Throws: `.storage` when a folder or the file cannot be created, or
    ///   an open file cannot be made private.
    static func prepare(databasePath path: String) throws(StoreError) -> [String] {
        try createFolders(URL(fileURLWithPath: path).deletingLastPathComponent().path)
        try createFile(path)
        // A file that is not a database is SQLite's to refuse, untouched.
        guard isDatabaseOrEmpty(path) else { return [] }
        var tightened: [String] = []
        for file in [path, path + "-wal", path + "-shm"] {
            if let line = try makePrivate(file) { tightened.append(line) }
        }
        return tightened
    }

    /// `mkdir` each missing folder of `folder`, outermost first, then sets
    /// 0700 on it (mkdir's mode passes through the umask).
    private static func createFolders(_ folder: String) throws(StoreError) {
        var missing: [String] = []
        var current = URL(fileURLWithPath: folder)
        while current.path != "/", !exists(current.path) {
            missing.append(current.path)
            current = current.deletingLastPathComponent()
        }
        for path in missing.reversed() {
            if mkdir(path, folderMode) == 0 {
                guard chmod(path, folderMode) == 0 else { throw failure("cannot make the folder \(path) private") }
            } else if errno != EEXIST {
                throw failure("cannot create the folder \(path)")
            }
        }
    }

    /// Creates the database file empty with 0600 when it does not exist (an
    /// empty file is a new SQLite database); leaves an existing one alone.
    private static func createFile(_ path: String) throws(StoreError) {
        let descriptor = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, fileMode)
        guard descriptor >= 0 else {
            if errno == EEXIST { return }
            throw failure("cannot create the database file \(path)")
        }
        defer { close(descriptor) }
        guard fchmod(descriptor, fileMode) == 0 else { throw failure("cannot make the database file \(path) private") }
    }

    /// Takes group and other permissions off `path` when it exists and has
    /// any; returns what it did, or nil when there was nothing to do.
    private static func makePrivate(_ path: String) throws(StoreError) -> String? {
        var status = stat()
        guard stat(path, &status) == 0 else {
            if errno == ENOENT { return nil }
            throw failure("cannot read the mode of \(path)")
        }
        let mode = status.st_mode & 0o7777
        guard mode & 0o077 != 0 else { return nil }
        let tightened = mode & ~mode_t(0o077)
        guard chmod(path, tightened) == 0 else {
            throw failure("\(path) can be read by other users (mode \(octal(mode))) and cannot be made private")
        }
        return "\(path) could be read by other users (mode \(octal(mode))); its mode is now \(octal(tightened))"
    }

    /// Whether `path` starts with SQLite's header, or is empty (a new
    /// database); false when it cannot be read.
    private static func isDatabaseOrEmpty(_ path: String) -> Bool {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        let header = Array("SQLite format 3\0".utf8)
        var start = [UInt8](repeating: 0, count: header.count)
        let count = read(descriptor, &start, start.count)
        return count == 0 || (count == header.count && start == header)
    }

    private static func exists(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0
    }

    private static func octal(_ mode: mode_t) -> String {
        "0" + String(mode, radix: 8)
    }

    /// A `.storage` error for the call that just failed, with the system's
    /// reason (`errno` is read before `what` is built, which may change it).
    private static func failure(_ what: @autoclosure () -> String) -> StoreError {
        let reason = String(cString: strerror(errno))
        return .storage(sqlite: SQLITE_CANTOPEN, message: "\(what()): \(reason)")
    }
}
