import Foundation
import HistoryTestSupport
import Testing
@testable import HistoryStore
@testable import HistorySQLite

/// The readers' VFS only adds a prefetch to the memory map's `xFetch`:
/// readers use it unless told not to, and what they read through it is
/// byte for byte what the default VFS reads.
@Suite("Prefetching VFS")
struct PrefetchingVFSTests {
    @Test func storeReadersOpenThroughItUnlessTurnedOff() async throws {
        try withTemporaryDirectory { directory in
            let path = directory.databasePath
            try SQLiteHistoryStore(configuration: SQLiteStoreConfiguration(path: path)).close()
            for prefetches in [true, false] {
                let reader = try SQLiteBackend.openReader(SQLiteStoreConfiguration(path: path, prefetchesPages: prefetches))
                defer { reader.close() }
                let file = try #require(reader.mainFile)
                #expect(PrefetchingVFS.prefetches(file) == prefetches)
            }
        }
    }

    /// A reader maps as much of the file as SQLite allows (its compile-time
    /// cap), not a fixed gigabyte: past the map, pages are read and copied.
    @Test func readersMapUpToSQLitesCap() async throws {
        try withTemporaryDirectory { directory in
            let path = directory.databasePath
            try SQLiteHistoryStore(configuration: SQLiteStoreConfiguration(path: path)).close()
            let reader = try SQLiteBackend.openReader(SQLiteStoreConfiguration(path: path))
            defer { reader.close() }
            let options = try reader.makeStatement(sql: "PRAGMA compile_options").rows { $0.optionalString(0) ?? "" }
            // "MAX_MMAP_SIZE=0x7fff0000" on Debian's build; SQLite's default when absent.
            let value = options.first { $0.hasPrefix("MAX_MMAP_SIZE=") }?.dropFirst("MAX_MMAP_SIZE=".count)
            let cap = value.flatMap { $0.hasPrefix("0x") ? Int64($0.dropFirst(2), radix: 16) : Int64($0) } ?? 0x7fff0000
            let mapped = try #require(try reader.makeStatement(sql: "PRAGMA mmap_size").rows { $0.int64(0) }.first)
            #expect(mapped == min(cap, SQLiteBackend.readerMemoryMapBytes))
            #expect(mapped > 1 << 30, "more than the gigabyte readers mapped before")
        }
    }

    /// Rows read from mapped pages through the wrapped `xFetch` equal the
    /// rows the default VFS reads from the same file, over thousands of
    /// pages (leaves and interior pages of the table and its indexes).
    @Test func mappedPagesReadAsWithTheDefaultVFS() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.databasePath
            let store = try SQLiteHistoryStore(configuration: SQLiteStoreConfiguration(path: path))
            _ = try await store.make("big")
            _ = try store.seed(30_000, to: "big")
            _ = try await store.make("small")
            let small = try store.seed(500, to: "small")
            _ = try await store.delete(messageID: small[7], in: cid("small"))
            // Closing the last connection checkpoints: every page is then
            // in the main file, read through the map.
            store.close()

            func rows(vfs: String?) throws -> (prefetched: Bool, rows: [String]) {
                let connection = try SQLiteConnection(path: path, vfs: vfs)
                defer { connection.close() }
                try connection.execute(sql: "PRAGMA mmap_size = \(SQLiteBackend.readerMemoryMapBytes)")
                let file = try #require(connection.mainFile)
                // A table scan, a scan of each index, and one lookup.
                let rows = try connection.makeStatement(sql: """
                    SELECT place, conversation_seq, id, sender, body, deleted, version FROM messages ORDER BY place
                    """).rows { row in (0..<7).map { row.optionalString(Int32($0)) ?? "NULL" }.joined(separator: "|") }
                    + connection.makeStatement(sql: "SELECT id FROM messages ORDER BY id DESC").rows { $0.optionalString(0) ?? "" }
                    + connection.makeStatement(sql: """
                        SELECT conversation_seq, version FROM messages INDEXED BY messages_by_version ORDER BY conversation_seq, version
                        """).rows { "\($0.int64(0)):\($0.int64(1))" }
                    + connection.makeStatement(sql: "SELECT body FROM messages WHERE id = 20000").rows { $0.optionalString(0) ?? "" }
                return (PrefetchingVFS.prefetches(file), rows)
            }
            let plain = try rows(vfs: nil)
            let prefetched = try rows(vfs: PrefetchingVFS.name)
            #expect(!plain.prefetched)
            #expect(prefetched.prefetched)
            #expect(plain.rows.count == 30_500 * 3 + 1)
            #expect(prefetched.rows == plain.rows)
        }
    }

    /// The same pages through the store, prefetching or not, while the
    /// file has pages in the WAL too (read with xRead, not the map).
    @Test func storePagesAreTheSameWithAndWithoutPrefetching() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.databasePath
            func walk(prefetching: Bool, appendFirst: Int) async throws -> [Int64] {
                let store = try SQLiteHistoryStore(configuration: SQLiteStoreConfiguration(path: path, prefetchesPages: prefetching))
                defer { store.close() }
                if (try? store.conversation(cid("c"))) == nil { _ = try await store.make("c") }
                _ = try store.seed(appendFirst, to: "c")
                _ = try await store.post(3, to: "c")
                return try store.allIDs(of: "c")
            }
            let first = try await walk(prefetching: false, appendFirst: 5_000)
            let second = try await walk(prefetching: true, appendFirst: 0)
            let third = try await walk(prefetching: true, appendFirst: 2_000)
            #expect(first.count == 5_003)
            #expect(second == first + Array(second[5_003...]))
            #expect(second.count == 5_006)
            #expect(third.count == 7_009)
            #expect(Array(third.prefix(5_006)) == second)
            #expect(third == third.sorted())
        }
    }
}
