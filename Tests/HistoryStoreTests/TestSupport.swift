import Dispatch
import Foundation
import Synchronization
import Testing
@testable import HistoryStore

/// A folder under the system's temporary directory, removed by `remove()`.
struct TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("history-store-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    var databasePath: String { url.appendingPathComponent("history.sqlite").path }

    func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}

/// Runs `body` with a store on a real file in a new temporary folder; the
/// store is closed and the folder removed whatever `body` does.
@discardableResult
func withTemporaryStore<T>(
    durability: Durability = .normal,
    maximumBatchSize: Int = 512,
    onBatchCommitted: (@Sendable (Int) -> Void)? = nil,
    _ body: (SQLiteHistoryStore) async throws -> T
) async throws -> T {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let configuration = StoreConfiguration(path: directory.databasePath, durability: durability,
                                           maximumBatchSize: maximumBatchSize, onBatchCommitted: onBatchCommitted)
    let store = try SQLiteHistoryStore(configuration: configuration)
    defer { store.close() }
    return try await body(store)
}

/// Runs `body` with the path of a database file in a new temporary folder.
@discardableResult
func withTemporaryPath<T>(_ body: (String) async throws -> T) async throws -> T {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    return try await body(directory.databasePath)
}

func cid(_ text: String) -> ConversationID {
    ConversationID(text)!
}

extension SQLiteHistoryStore {
    /// Creates a conversation named `id`.
    @discardableResult
    func make(_ id: String, title: String? = nil) async throws -> Conversation {
        try await createConversation(id: cid(id), title: title)
    }

    /// Appends `count` messages through group commit, one after the other.
    @discardableResult
    func post(_ count: Int, to id: String, sender: String = "ana") async throws -> [Message] {
        var messages: [Message] = []
        for index in 0..<count {
            messages.append(try await append(NewMessage(sender: sender, body: "message \(index)"), to: cid(id)).message)
        }
        return messages
    }

    /// Seeds `count` messages with the bulk loader; returns their ids.
    @discardableResult
    func seed(_ count: Int, to id: String) throws -> [Int64] {
        let messages = (0..<count).map { NewMessage(sender: "seed", body: "seeded \($0)") }
        guard let ids = try bulkAppend(messages, to: cid(id)) else { return [] }
        return Array(ids)
    }

    /// Every message id of the conversation, ascending, read in after pages.
    func allIDs(of id: String) throws -> [Int64] {
        var ids: [Int64] = []
        var page = try self.page(of: cid(id), PageQuery(cursor: .newest, limit: 1))
        guard page.messages.first != nil else { return [] }
        // Walk down to the first message, then collect everything upwards.
        while page.hasOlder {
            page = try self.page(of: cid(id), PageQuery(cursor: .before(page.oldestID!), limit: 200))
        }
        ids.append(contentsOf: page.messages.map(\.id))
        while page.hasNewer {
            page = try self.page(of: cid(id), PageQuery(cursor: .after(page.newestID!), limit: 200))
            ids.append(contentsOf: page.messages.map(\.id))
        }
        return ids
    }

    /// The completion-based append, waited for on a plain thread.
    func appendBlocking(_ message: NewMessage, to id: ConversationID) -> Result<AppendOutcome, StoreError> {
        let done = DispatchSemaphore(value: 0)
        let box = Locked<Result<AppendOutcome, StoreError>?>(nil)
        append(message, to: id) { result in
            box.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        return box.withLock { $0! }
    }
}

/// Runs `body(index)` on `count` threads at once and waits for all of them.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        let thread = Thread {
            body(index)
            group.leave()
        }
        thread.start()
    }
    group.wait()
}

/// Runs `body` on a thread of its own, not on Swift's cooperative pool: a
/// blocking body there takes one of the pool's few threads (two on a
/// 2-core machine), and with other tests blocking the rest, work this test
/// waits for may not run at all (a wait test timed out all 200 of its waits
/// that way in CI). `finished()` awaits the end without blocking.
func onBackgroundThread(_ body: @escaping @Sendable () -> Void) -> BackgroundThread {
    let handle = BackgroundThread()
    Thread {
        body()
        handle.done.withLock { $0 = true }
    }.start()
    return handle
}

final class BackgroundThread: Sendable {
    fileprivate let done = Locked(false)

    func finished() async {
        while !done.value { try? await Task.sleep(for: .milliseconds(5)) }
    }

    var isFinished: Bool { done.value }
}

/// Polls `condition` every 5 ms for at most `seconds`; returns whether it held.
func eventually(within seconds: Double = 10, _ condition: () -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return condition()
}

/// Reads one column of rows with a plain connection (schema checks).
func queryStrings(_ path: String, _ sql: String, column: Int32 = 0) throws -> [String] {
    let connection = try Connection(path: path)
    defer { connection.close() }
    return try connection.makeStatement(sql: sql).rows { $0.optionalString(column) ?? "NULL" }
}

/// A value shared between threads and escaping closures (a `Mutex` alone
/// cannot be captured by an escaping closure: it is not copyable).
final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    init(_ value: Value) {
        mutex = Mutex(value)
    }

    func withLock<T: Sendable>(_ body: (inout Value) -> T) -> T {
        mutex.withLock { body(&$0) }
    }

    var value: Value { mutex.withLock { $0 } }
}
