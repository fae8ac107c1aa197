import Dispatch
import Foundation
import HistoryTestSupport
import Testing
@testable import HistoryStore
@testable import HistorySQLite

func cid(_ text: String) -> ConversationID {
    ConversationID(text)!
}

extension HistoryStore {
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
        guard let ids = try bulkLoad(messages, to: cid(id)) else { return [] }
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

/// Reads one column of rows with a plain connection (schema checks).
func queryStrings(_ path: String, _ sql: String, column: Int32 = 0) throws -> [String] {
    let connection = try SQLiteConnection(path: path)
    defer { connection.close() }
    return try connection.makeStatement(sql: sql).rows { $0.optionalString(column) ?? "NULL" }
}
