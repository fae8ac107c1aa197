import Foundation
import HistoryPostgres
import HistoryStore
import HistorySQLite
import HistoryTestSupport
import Synchronization

/// A throwaway migrated database with one writer instance on it and
/// plain SQL over it: the set-up of most writer tests (`uri` for a second
/// instance or a raw session). The instance is closed when `body` ends.
func withWriter(_ body: (_ instance: WriterInstance, _ rows: Rows, _ uri: String) async throws -> Void) async throws {
    try await withTestDatabase { uri in
        try WriterInstance.migrate(uri)
        let instance = WriterInstance(uri: uri)
        defer { instance.close() }
        try await body(instance, try Rows(uri), uri)
    }
}

/// One "instance" for the writer tests: its own pool and `PostgresWriter`
/// on a migrated database, with async forms of every write kind, and what
/// `onCommitted` reported.
final class WriterInstance: Sendable {
    let pool: PostgresConnectionPool
    let writer: PostgresWriter
    private let log: CommitLog

    init(uri: String, maximumBatchSize: Int = 64) {
        pool = PostgresConnectionPool(uri: uri, maximumConnections: 2)
        let log = CommitLog()
        self.log = log
        writer = PostgresWriter(pool: pool, maximumBatchSize: maximumBatchSize) { commit in
            log.commits.withLock { $0.append(commit) }
        }
    }

    /// Every commit `onCommitted` reported, in order.
    var commits: [PostgresCommit] { log.commits.withLock { $0 } }

    /// Applies every migration to the database at `uri`.
    static func migrate(_ uri: String) throws {
        let connection = try PGConnection(uri: uri)
        _ = try PostgresMigrator(migrations: PostgresSchema.migrations()).migrate(connection)
    }

    func close() {
        writer.close()
        pool.close()
    }

    func create(_ id: String?, title: String? = nil, owner: String? = nil) async -> Result<Conversation, StoreError> {
        await answer { writer.submit(.createConversation(id: id.map { ConversationID($0)! }, title: title,
                                                         owner: owner.map { UserID($0)! }, completion: $0)) }
    }

    func append(_ body: String, to conversation: String, sender: String = "ana", clientID: String? = nil,
                replyTo: Int64? = nil) async -> Result<AppendOutcome, StoreError> {
        await answer { writer.submit(.append(NewMessage(sender: sender, body: body, clientID: clientID, replyTo: replyTo),
                                             conversation: ConversationID(conversation)!, completion: $0)) }
    }

    func edit(_ id: Int64, in conversation: String, body: String) async -> Result<Message, StoreError> {
        await answer { writer.submit(.edit(messageID: id, conversation: ConversationID(conversation)!, body: body, completion: $0)) }
    }

    func delete(_ id: Int64, in conversation: String) async -> Result<Message, StoreError> {
        await answer { writer.submit(.delete(messageID: id, conversation: ConversationID(conversation)!, completion: $0)) }
    }

    func put(_ user: String, _ role: MemberRole = .member, in conversation: String) async -> Result<MemberChange, StoreError> {
        await answer { writer.submit(.putMember(UserID(user)!, role: role, conversation: ConversationID(conversation)!, completion: $0)) }
    }

    func remove(_ user: String, from conversation: String) async -> Result<Bool, StoreError> {
        await answer { writer.submit(.removeMember(UserID(user)!, conversation: ConversationID(conversation)!, completion: $0)) }
    }

    func markRead(_ user: String, in conversation: String, upTo id: Int64) async -> Result<ReadState, StoreError> {
        await answer { writer.submit(.markRead(UserID(user)!, conversation: ConversationID(conversation)!, upTo: id, completion: $0)) }
    }

    private func answer<T: Sendable>(_ start: (@escaping @Sendable (Result<T, StoreError>) -> Void) -> Void) async -> Result<T, StoreError> {
        await withCheckedContinuation { continuation in start { continuation.resume(returning: $0) } }
    }
}

private final class CommitLog: Sendable {
    let commits = Mutex<[PostgresCommit]>([])
}

extension Result {
    /// The success value, or nil (tests compare failures with `==`).
    var value: Success? { try? get() }
}

/// Plain SQL read-backs (the reads are another part of the store).
struct Rows {
    let connection: PGConnection

    init(_ uri: String) throws {
        connection = try PGConnection(uri: uri)
    }

    func int64(_ sql: String, _ parameters: [PostgresValue] = []) throws -> Int64? {
        let result = try connection.query(sql, parameters)
        return result.rowCount == 0 ? nil : result.optionalInt64(0, 0)
    }

    func int64s(_ sql: String, _ parameters: [PostgresValue] = []) throws -> [Int64] {
        let result = try connection.query(sql, parameters)
        return (0..<result.rowCount).map { result.int64($0, 0) }
    }

    func strings(_ sql: String, _ parameters: [PostgresValue] = []) throws -> [String?] {
        let result = try connection.query(sql, parameters)
        return (0..<result.rowCount).map { result.optionalString($0, 0) }
    }

    /// message_count, oldest_id, newest_id, version, activity of a conversation.
    func counters(_ id: String) throws -> [Int64?] {
        let result = try connection.query("""
            SELECT message_count, oldest_id, newest_id, version, activity FROM conversations WHERE id = $1
            """, [.text(id)])
        return (0..<5).map { result.optionalInt64(0, $0) }
    }

    func activity() throws -> Int64 {
        try int64("SELECT value FROM activity_counter WHERE id = 1")!
    }
}

/// Makes the instance's next batch wait (another session holds the row of
/// conversation `blocker`, which it appends to) until the returned
/// connection commits: what is submitted meanwhile is the batch after.
func holdNextBatch(of instance: WriterInstance, uri: String,
                   blocked: @escaping @Sendable (Result<AppendOutcome, StoreError>) -> Void = { _ in }) async throws
    -> PGConnection {
    let holder = try PGConnection(uri: uri)
    try holder.execute(sql: "BEGIN")
    try holder.query("SELECT 1 FROM conversations WHERE id = 'blocker' FOR UPDATE")
    instance.writer.submit(.append(NewMessage(sender: "a", body: "waits"), conversation: ConversationID("blocker")!, completion: blocked))
    let rows = try Rows(uri)
    for _ in 0..<3_000 {
        let waiting = try rows.int64("""
            SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'
            """)
        if waiting == 1 { break }
        try await Task.sleep(for: .milliseconds(10))
    }
    return holder
}
