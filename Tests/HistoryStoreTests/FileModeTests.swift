import HistoryTestSupport
import Foundation
import Synchronization
import Testing
@testable import HistoryStore
@testable import HistorySQLite

/// The history is readable by the user the store runs as and nobody else:
/// folders the store creates are 0700, the database and its `-wal` and
/// `-shm` 0600, whatever the umask, and an existing file other users could
/// read is made private at open and reported.
///
/// Serialized: the umask is the process's, so these tests set it one at a
/// time and put the old one back (umasks that only loosen or keep the
/// usual 022, so tests running beside them are not hurt).
@Suite("File modes", .serialized)
struct FileModeTests {
    @Test(arguments: [mode_t(0o022), 0o000, 0o002])
    func aNewDatabaseIsPrivateWhateverTheUmask(_ mask: mode_t) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let outer = directory.url.appendingPathComponent("data").path
        let inner = outer + "/history"
        let path = inner + "/history.sqlite"
        let modeOfExistingParent = try mode(of: directory.url.path)

        let previous = umask(mask)
        defer { umask(previous) }
        let store = try SQLiteHistoryStore(configuration: SQLiteStoreConfiguration(path: path))
        defer { store.close() }
        try await store.make("c")
        try await store.post(3, to: "c")
        umask(previous)

        #expect(try mode(of: outer) == 0o700)
        #expect(try mode(of: inner) == 0o700)
        #expect(try mode(of: directory.url.path) == modeOfExistingParent, "a folder the store did not create was changed")
        for file in [path, path + "-wal", path + "-shm"] {
            #expect(FileManager.default.fileExists(atPath: file), "\(file) was not created")
            #expect(try mode(of: file) == 0o600, "\(file)")
        }
    }

    @Test func existingFilesOthersCouldReadAreMadePrivateAndReported() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.databasePath
        let first = try SQLiteHistoryStore(configuration: SQLiteStoreConfiguration(path: path))
        try await first.make("c")
        try await first.post(1, to: "c")
        first.close()
        // A store has its file alone (`DatabaseFileLock`): a plain
        // connection keeps the -wal and -shm files in place instead (the
        // last connection to close removes them).
        let holder = try SQLiteConnection(path: path)
        defer { holder.close() }
        #expect(try holder.scalarInt64(sql: "SELECT count(*) FROM messages") == 1)
        // As a build that left SQLite's defaults would have made them.
        let files = [path, path + "-wal", path + "-shm"]
        for file in files { try #require(chmod(file, 0o644) == 0) }
        try #require(chmod(directory.url.path, 0o755) == 0)

        let warnings = Locked<[String]>([])
        let second = try SQLiteHistoryStore(configuration: SQLiteStoreConfiguration(
            path: path, onWarning: { line in warnings.withLock { $0.append(line) } }))
        defer { second.close() }
        for file in files {
            #expect(try mode(of: file) == 0o600, "\(file)")
            #expect(warnings.value.contains { $0.hasPrefix(file + " ") && $0.contains("0644") && $0.contains("0600") },
                    "\(warnings.value)")
        }
        #expect(warnings.value.count == 3)
        // The folder existed: it may be shared, so it is left as it was.
        #expect(try mode(of: directory.url.path) == 0o755)
        #expect(try second.page(of: cid("c"), PageQuery()).messages.count == 1)
    }

    @Test func privateFilesAreOpenedWithoutAWarning() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.databasePath
            try SQLiteHistoryStore(configuration: SQLiteStoreConfiguration(path: path)).close()
            let warnings = Locked<[String]>([])
            let store = try SQLiteHistoryStore(configuration: SQLiteStoreConfiguration(
                path: path, onWarning: { line in warnings.withLock { $0.append(line) } }))
            store.close()
            #expect(warnings.value.isEmpty)
        }
    }

    /// A folder that cannot be created is a clear error, not a crash.
    @Test func aFolderThatCannotBeCreatedIsAClearError() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.databasePath
            try Data("a file".utf8).write(to: URL(fileURLWithPath: path))
            do {
                _ = try SQLiteHistoryStore(configuration: SQLiteStoreConfiguration(path: path + "/inner/history.sqlite"))
                Issue.record("a store was opened below a file")
            } catch {
                guard case .storage(let failure)? = error as? StoreError else { Issue.record("wrong error \(error)"); return }
                #expect(failure.message.contains("cannot create the folder"), "\(failure)")
            }
        }
    }

    private func mode(of path: String) throws -> mode_t {
        var status = stat()
        try #require(stat(path, &status) == 0, "cannot stat \(path)")
        return status.st_mode & 0o7777
    }
}
