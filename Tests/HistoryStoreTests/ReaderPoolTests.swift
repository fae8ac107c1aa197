import Dispatch
import Foundation
import HistoryTestSupport
import Testing
@testable import HistoryStore
@testable import HistorySQLite

@Suite("Reader pool")
struct ReaderPoolTests {
    /// `close()` returns only when no read is running on the file any more,
    /// so a caller may remove the file right after it.
    @Test func closeWaitsForAReadInProgress() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.databasePath
            // A file for the readers to open.
            let store = try SQLiteHistoryStore(configuration: SQLiteStoreConfiguration(path: path))
            store.close()
            let pool = SQLiteReaderPool(connections: [try SQLiteConnection(path: path), try SQLiteConnection(path: path)])
            let reading = DispatchSemaphore(value: 0)
            let readEnded = Locked(false)
            let openAfterClose = Locked<Bool?>(nil)
            let reader = onBackgroundThread {
                // The connection outlives the read here only so the test
                // can look at it after `close()`; nothing reads through it.
                nonisolated(unsafe) var used: SQLiteConnection?
                _ = try? pool.read { reader throws(StoreError) -> Int in
                    used = reader.connection
                    reading.signal()
                    // Hold the read until `close()` has begun: from then on
                    // the pool's other connection can no longer be checked out.
                    let deadline = ContinuousClock.now + .seconds(10)
                    while (try? pool.read({ _ throws(StoreError) in 0 })) != nil, ContinuousClock.now < deadline {
                        Thread.sleep(forTimeInterval: 0.001)
                    }
                    Thread.sleep(forTimeInterval: 0.1)
                    readEnded.withLock { $0 = true }
                    return 0
                }
                // The pool closes a connection checked in after `close()`
                // began, on the thread that checks it in: this one.
                openAfterClose.withLock { $0 = used?.isOpen }
            }
            reading.wait()
            pool.close()
            // The read had ended before close returned.
            #expect(readEnded.value)
            await reader.finished()
            // And the connection it used was closed, not put back.
            #expect(openAfterClose.value == false)
            #expect(throws: StoreError.closed) {
                try pool.read { _ throws(StoreError) in 0 }
            }
        }
    }
}
