import Dispatch
import Foundation
import Testing
@testable import HistoryStore

@Suite("Reader pool")
struct ReaderPoolTests {
    /// `close()` returns only when no read is running on the file any more,
    /// so a caller may remove the file right after it.
    @Test func closeWaitsForAReadInProgress() async throws {
        try await withTemporaryPath { path in
            // A file for the readers to open.
            let store = try SQLiteHistoryStore(configuration: StoreConfiguration(path: path))
            store.close()
            let pool = ReaderPool(connections: [try Connection(path: path), try Connection(path: path)])
            let reading = DispatchSemaphore(value: 0)
            let readEnded = Locked(false)
            let reader = onBackgroundThread {
                _ = try? pool.read { connection throws(StoreError) -> Int in
                    reading.signal()
                    Thread.sleep(forTimeInterval: 0.3)
                    readEnded.withLock { $0 = true }
                    return connection.isOpen ? 1 : 0
                }
            }
            reading.wait()
            pool.close()
            // The read had ended before close returned, and its connection is closed.
            #expect(readEnded.value)
            await reader.finished()
            #expect(throws: StoreError.closed) {
                try pool.read { _ throws(StoreError) in 0 }
            }
        }
    }
}
