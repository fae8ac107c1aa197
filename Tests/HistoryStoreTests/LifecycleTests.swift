import CSQLite
import Dispatch
import Foundation
import HistoryTestSupport
import Testing
@testable import HistoryStore
@testable import HistorySQLite

@Suite("Opening and closing", .postgresCluster)
struct LifecycleTests {
    @Test(arguments: StoreBackend.allCases) func closeIsIdempotentAndLaterCallsFailClosed(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("c")
            store.close()
            store.close()
            await #expect(throws: StoreError.closed) { try await store.append(NewMessage(sender: "s", body: "b"), to: cid("c")) }
            await #expect(throws: StoreError.closed) { try await store.createConversation(id: cid("d"), title: nil) }
            await #expect(throws: StoreError.closed) { try await store.edit(messageID: 1, in: cid("c"), body: "b") }
            await #expect(throws: StoreError.closed) { try await store.delete(messageID: 1, in: cid("c")) }
            #expect(throws: StoreError.closed) { try store.conversation(cid("c")) }
            #expect(throws: StoreError.closed) { try store.page(of: cid("c"), PageQuery()) }
            #expect(throws: StoreError.closed) { try store.changes(in: cid("c"), ChangeQuery(since: 0)) }
            #expect(throws: StoreError.closed) { try store.message(1, in: cid("c")) }
            #expect(throws: StoreError.closed) { try store.bulkLoad([NewMessage(sender: "s", body: "b")], to: cid("c")) }
        }
    }

    /// One open store per file (`DatabaseFileLock`): a second store is
    /// refused before it writes anything, the first is untouched, and the
    /// file opens again once the first is closed.
    @Test func aSecondStoreOnTheSameFileIsRefusedUntilTheFirstCloses() async throws {
        try await withTemporaryDirectory { directory in
            let configuration = SQLiteStoreConfiguration(path: directory.databasePath, durability: .normal)
            let first = try SQLiteHistoryStore(configuration: configuration)
            try await first.make("c")
            do throws(StoreError) {
                _ = try SQLiteHistoryStore(configuration: configuration)
                Issue.record("a second store opened the file")
            } catch .storage(let failure) {
                #expect(failure.code == String(SQLITE_BUSY), "\(failure)")
                #expect(failure.message.contains("one process serves a SQLite file at a time"), "\(failure)")
            } catch {
                Issue.record("refused with \(error) instead")
            }
            _ = try await first.append(NewMessage(sender: "s", body: "after the refusal"), to: cid("c"))
            first.close()
            let second = try SQLiteHistoryStore(configuration: configuration)
            defer { second.close() }
            #expect(try second.page(of: cid("c"), PageQuery()).messages.map(\.body) == ["after the refusal"])
        }
    }

    @Test func closeWritesWhatWasQueued() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.databasePath
            let configuration = SQLiteStoreConfiguration(path: path, durability: .normal)
            var store = try SQLiteHistoryStore(configuration: configuration)
            try await store.make("c")
            let results = Locked<[Result<AppendOutcome, StoreError>]>([])
            for index in 0..<100 {
                store.append(NewMessage(sender: "s", body: "\(index)"), to: cid("c")) { result in
                    results.withLock { $0.append(result) }
                }
            }
            store.close()
            #expect(results.value.count == 100)
            #expect(results.value.allSatisfy { (try? $0.get()) != nil })
            store = try SQLiteHistoryStore(configuration: configuration)
            defer { store.close() }
            #expect(try store.conversation(cid("c")).messageCount == 100)
        }
    }

    @Test(arguments: StoreBackend.allCases) func closingFromACompletionHandlerDoesNotDeadlock(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("c")
            let closed = DispatchSemaphore(value: 0)
            store.append(NewMessage(sender: "s", body: "last words"), to: cid("c")) { _ in
                store.close()
                closed.signal()
            }
            #expect(closed.wait(timeout: .now() + 20) == .success)
            #expect(throws: StoreError.closed) { try store.conversation(cid("c")) }
        }
    }

    @Test func theFolderIsCreated() async throws {
        try withTemporaryDirectory { directory in
            let path = directory.databasePath
            let nested = URL(fileURLWithPath: path).deletingLastPathComponent()
                .appendingPathComponent("deeper/still/history.sqlite").path
            let store = try SQLiteHistoryStore(configuration: SQLiteStoreConfiguration(path: nested))
            store.close()
            #expect(FileManager.default.fileExists(atPath: nested))
        }
    }

    @Test func badSettingsAndFilesAreRefused() async throws {
        try withTemporaryDirectory { directory in
            let path = directory.databasePath
            #expect(throws: StoreError.self) { try SQLiteHistoryStore(configuration: SQLiteStoreConfiguration(path: path, readerCount: 0)) }
            #expect(throws: StoreError.self) { try SQLiteHistoryStore(configuration: SQLiteStoreConfiguration(path: path, maximumBatchSize: 0)) }
            try Data(repeating: 0x5A, count: 8192).write(to: URL(fileURLWithPath: path))
            do {
                _ = try SQLiteHistoryStore(configuration: SQLiteStoreConfiguration(path: path))
                Issue.record("opened a file that is not a database")
            } catch {
                guard case .storage? = error as? StoreError else { Issue.record("wrong error \(error)"); return }
            }
        }
    }

    @Test func moreReadingThreadsThanReadersAllGetServed() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.databasePath
            let store = try SQLiteHistoryStore(configuration: SQLiteStoreConfiguration(path: path, durability: .normal, readerCount: 2))
            defer { store.close() }
            try await store.make("c")
            try store.seed(300, to: "c")
            let failures = Locked(0)
            onThreads(12) { _ in
                for _ in 0..<100 {
                    if (try? store.page(of: cid("c"), PageQuery(cursor: .before(200), limit: 20)))?.messages.count != 20 {
                        failures.withLock { $0 += 1 }
                    }
                }
            }
            #expect(failures.value == 0)
        }
    }

    @Test func theFileStaysSound() async throws {
        try await withTemporaryStore { store in
            try await store.make("c")
            try store.seed(1000, to: "c")
            #expect(try store.checkIntegrity() == ["ok"])
        }
    }
}
