import Foundation
import HistoryTestSupport
import Testing
@testable import HistoryStore
@testable import HistorySQLite

/// A long read during a burst of appends holds checkpoints back, so the WAL
/// file grows; once the read ends and SQLite starts the WAL over, the file
/// must shrink back to `walSizeLimitBytes` instead of keeping its peak size
/// for the life of the database.
@Suite("WAL size")
struct WALSizeTests {
    @Test func theWALShrinksToItsLimitAfterALongReadHeldItBack() async throws {
        let limited = try await walSizes(limit: 256 * 1024)
        #expect(limited.peak > 4 << 20)
        // The limit plus the few transactions written since the restart.
        #expect(limited.after <= 2 << 20 && limited.after < limited.peak / 4)
        // The control: a limit above the peak keeps the file as it was.
        let unlimited = try await walSizes(limit: 64 << 20)
        #expect(unlimited.peak > 4 << 20)
        #expect(unlimited.after >= unlimited.peak)
    }

    /// The WAL's size at its peak (appends while a reader holds a snapshot)
    /// and after the reader let go and the writer went on appending. The
    /// blocking work runs on a thread of its own (see `onBackgroundThread`).
    private func walSizes(limit: Int64) async throws -> (peak: Int64, after: Int64) {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.databasePath
        let store = try SQLiteHistoryStore(configuration: SQLiteStoreConfiguration(
            path: path, durability: .normal, walSizeLimitBytes: limit))
        defer { store.close() }
        try await store.make("c")
        let result = Locked<Result<(peak: Int64, after: Int64), any Error>?>(nil)
        await onBackgroundThread {
            result.withLock { $0 = Result { try Self.appendPastAHeldSnapshot(store, path: path) } }
        }.finished()
        return try #require(result.value).get()
    }

    private static func appendPastAHeldSnapshot(_ store: SQLiteHistoryStore, path: String) throws -> (peak: Int64, after: Int64) {
        let walPath = path + "-wal"
        let body = String(repeating: "w", count: 400)
        let chunk = (0..<2_000).map { NewMessage(sender: "s", body: "\($0) \(body)") }

        // A reader that keeps one snapshot open: no checkpoint can go past
        // it, so the WAL only grows.
        let reader = try SQLiteConnection(path: path)
        defer { reader.close() }
        try reader.execute(sql: "BEGIN")
        _ = try reader.scalarInt64(sql: "SELECT count(*) FROM messages")
        for _ in 0..<8 { _ = try store.bulkAppend(chunk, to: cid("c")) }
        try reader.execute(sql: "COMMIT")
        let peak = fileSize(walPath)

        // Free to checkpoint: the next commits back-fill the WAL, and the
        // one after starts it over (and cuts it to the limit).
        for _ in 0..<6 { _ = try store.bulkAppend(Array(chunk.prefix(200)), to: cid("c")) }
        return (peak, fileSize(walPath))
    }

    private static func fileSize(_ path: String) -> Int64 {
        ((try? FileManager.default.attributesOfItem(atPath: path)[.size]) as? NSNumber)?.int64Value ?? -1
    }
}
