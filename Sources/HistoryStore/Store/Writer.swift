import CSQLite
import Dispatch

/// The one connection that writes, and the serial queue that owns it.
///
/// Everything that changes the database runs here: group-committed batches
/// (`perform`) and the bulk loader. Message ids are allocated here, inside
/// the writing transaction, so they increase in commit order (guarantee 2).
///
/// The use of `@unchecked Sendable` is safe for this type because:
/// - `connection`, `nextMessageID`, `committedSeqs` and `batchSeqs` are only
///   touched by code running on `queue` (every entry point is called from
///   `queue.sync`/`queue.async`, and `perform`/`bulkAppend` check it with
///   `dispatchPrecondition`);
/// - `queue` itself is a `let` of a thread-safe type.
final class Writer: @unchecked Sendable {
    let queue = DispatchQueue(label: "history-store.writer", qos: .userInitiated)
    private let connection: Connection
    /// The next id to hand out: never below `max(id) + 1`, never lowered,
    /// so an id that might have reached a caller is never reused.
    private var nextMessageID: Int64
    /// Public id -> seq for committed conversations (immutable mapping).
    private var committedSeqs: [String: Int64] = [:]
    /// Conversations created by the batch being written; kept apart until
    /// its COMMIT succeeds.
    private var batchSeqs: [String: Int64] = [:]

    private static let seqCacheCapacity = 100_000

    init(connection: Connection) throws(StoreError) {
        self.connection = connection
        self.nextMessageID = try Self.loadNextMessageID(connection)
    }

    /// Closes the connection, after whatever the queue is running.
    func close() {
        queue.sync { connection.close() }
    }

    // MARK: - Group commit

    /// What a batch produced: the answers to give once it is durable, and
    /// each touched conversation's new version.
    struct BatchOutcome {
        var answers: [() -> Void] = []
        var versions: [ConversationID: Int64] = [:]
        var committed = false
    }

    /// Writes every request of `batch` in one transaction, each inside its
    /// own savepoint: a request that fails (unknown conversation, missing
    /// reply target, conflicting client id) is rolled back alone and answered
    /// with its error, the others commit. When BEGIN or COMMIT fails, every
    /// request is answered `.storage` and the writer's caches are reloaded.
    func perform(_ batch: [WriteRequest]) -> BatchOutcome {
        dispatchPrecondition(condition: .onQueue(queue))
        var outcome = BatchOutcome()
        do throws(SQLiteError) {
            try connection.cachedStatement(sql: "BEGIN IMMEDIATE").execute()
        } catch {
            return failed(batch, with: error)
        }
        for request in batch {
            switch request {
            case .createConversation(let id, let title, let completion):
                let result = item { () throws(StoreError) in try createConversation(id: id, title: title) }
                outcome.answers.append { completion(result) }
            case .append(let message, let conversation, let completion):
                let result = item { () throws(StoreError) in try append(message, to: conversation) }
                if case .success(.created(let stored)) = result { outcome.versions[conversation] = stored.version }
                outcome.answers.append { completion(result) }
            case .edit(let messageID, let conversation, let body, let completion):
                let result = item { () throws(StoreError) in try edit(messageID: messageID, in: conversation, body: body) }
                if case .success(let stored) = result { outcome.versions[conversation] = stored.version }
                outcome.answers.append { completion(result) }
            case .delete(let messageID, let conversation, let completion):
                let result = item { () throws(StoreError) in try delete(messageID: messageID, in: conversation) }
                if case .success(let stored) = result {
                    outcome.versions[conversation] = max(outcome.versions[conversation] ?? 0, stored.version)
                }
                outcome.answers.append { completion(result) }
            }
        }
        do throws(SQLiteError) {
            try connection.cachedStatement(sql: "COMMIT").execute()
        } catch {
            connection.rollback()
            return failed(batch, with: error)
        }
        committedSeqs.merge(batchSeqs) { _, new in new }
        batchSeqs.removeAll()
        outcome.committed = true
        return outcome
    }

    /// One request inside its own savepoint.
    private func item<T>(_ body: () throws(StoreError) -> T) -> Result<T, StoreError> {
        let created = batchSeqs
        let result = Result { () throws(StoreError) -> T in
            try connection.savepoint("item", mapError: StoreError.init, body)
        }
        if case .failure = result { batchSeqs = created }
        return result
    }

    private func failed(_ batch: [WriteRequest], with error: SQLiteError) -> BatchOutcome {
        resetCaches()
        let storeError = StoreError(error)
        var outcome = BatchOutcome()
        outcome.answers = batch.map { request in { request.fail(storeError) } }
        return outcome
    }

    /// After a failed transaction nothing the writer remembers from it can
    /// be trusted: forget the batch's conversations and move the next id
    /// past anything that may have reached the file.
    private func resetCaches() {
        batchSeqs.removeAll()
        if let stored = try? Self.loadNextMessageID(connection) {
            nextMessageID = max(nextMessageID, stored)
        }
    }

    // MARK: - Operations (inside the batch transaction)

    private func createConversation(id: ConversationID?, title: String?) throws(StoreError) -> Conversation {
        let title = title?.isEmpty == false ? title : nil
        let conversationID: ConversationID
        if let id {
            guard try seq(of: id) == nil else { throw .conversationExists(id) }
            conversationID = id
        } else {
            conversationID = try unusedGeneratedID()
        }
        let createdAt = Timestamp.now()
        let seq = try sqlite { () throws(SQLiteError) in
            try connection.cachedStatement(sql: """
                INSERT INTO conversations (id, title, created_at) VALUES (?, ?, ?) RETURNING seq
                """).firstRow(conversationID.rawValue, title, createdAt.millisecondsSinceEpoch) { $0.int64(0) }
        }
        guard let seq else { throw .storage(code: SQLITE_ERROR, message: "INSERT ... RETURNING returned no row") }
        batchSeqs[conversationID.rawValue] = seq
        return Conversation(id: conversationID, title: title, createdAt: createdAt, messageCount: 0,
                            oldestID: nil, newestID: nil, version: 0)
    }

    private func append(_ new: NewMessage, to conversation: ConversationID) throws(StoreError) -> AppendOutcome {
        guard let seq = try seq(of: conversation) else { throw .conversationNotFound(conversation) }
        let fingerprint = StoredRows.clientFingerprint(sender: new.sender, body: new.body)
        if let clientID = new.clientID {
            let earlier = try sqlite { () throws(SQLiteError) in
                try connection.cachedStatement(sql: """
                    SELECT \(StoredRows.messageColumns), client_fingerprint FROM messages
                    WHERE conversation_seq = ? AND client_id = ?
                    """).firstRow(seq, clientID) { row in
                    (message: StoredRows.message(row, in: conversation), fingerprint: row.optionalInt64(9))
                }
            }
            if let earlier {
                guard earlier.fingerprint == fingerprint else { throw .clientIDConflict(clientID: clientID) }
                return .existing(earlier.message)
            }
        }
        if let replyTo = new.replyTo, try !exists(seq: seq, id: replyTo) {
            throw .replyTargetNotFound(messageID: replyTo)
        }
        let id = nextMessageID
        nextMessageID += 1
        let createdAt = Timestamp.now()
        let version = try bumpVersion(seq: seq, appending: id)
        try sqlite { () throws(SQLiteError) in
            try connection.cachedStatement(sql: """
                INSERT INTO messages (conversation_seq, id, sender, body, created_at, reply_to,
                                      client_id, client_fingerprint, created_version, version)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """).execute(seq, id, new.sender, new.body, createdAt.millisecondsSinceEpoch, new.replyTo,
                             new.clientID, new.clientID == nil ? nil : fingerprint, version, version)
        }
        return .created(Message(id: id, conversationID: conversation, sender: new.sender, body: new.body,
                                createdAt: createdAt, editedAt: nil, deleted: false, replyTo: new.replyTo,
                                clientID: new.clientID, version: version))
    }

    private func edit(messageID: Int64, in conversation: ConversationID, body: String) throws(StoreError) -> Message {
        let (seq, current) = try existingMessage(messageID, in: conversation)
        guard !current.deleted else { throw .messageDeleted(messageID: messageID) }
        let version = try bumpVersion(seq: seq, appending: nil)
        let editedAt = Timestamp.now()
        try sqlite { () throws(SQLiteError) in
            try connection.cachedStatement(sql: """
                UPDATE messages SET body = ?, edited_at = ?, version = ? WHERE conversation_seq = ? AND id = ?
                """).execute(body, editedAt.millisecondsSinceEpoch, version, seq, messageID)
        }
        var edited = current
        edited.body = body
        edited.editedAt = editedAt
        edited.version = version
        return edited
    }

    /// Tombstones the message; a tombstone is answered unchanged (no version bump).
    private func delete(messageID: Int64, in conversation: ConversationID) throws(StoreError) -> Message {
        let (seq, current) = try existingMessage(messageID, in: conversation)
        guard !current.deleted else { return current }
        let version = try bumpVersion(seq: seq, appending: nil)
        try sqlite { () throws(SQLiteError) in
            try connection.cachedStatement(sql: """
                UPDATE messages SET body = '', deleted = 1, version = ? WHERE conversation_seq = ? AND id = ?
                """).execute(version, seq, messageID)
        }
        var tombstone = current
        tombstone.body = ""
        tombstone.deleted = true
        tombstone.version = version
        return tombstone
    }

    // MARK: - Bulk loading

    /// Appends `messages` in one transaction (the bench and `seed --direct`);
    /// returns the ids given and the conversation's new version. A repeated
    /// or already used `client_id` fails the whole load with `.clientIDConflict`.
    func bulkAppend(_ messages: [NewMessage], to conversation: ConversationID) throws(StoreError)
        -> (ids: ClosedRange<Int64>, version: Int64)? {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !messages.isEmpty else { return nil }
        let firstID = nextMessageID
        // Advanced before writing: if COMMIT fails half-way these ids may
        // still reach the file, so they are never handed out again.
        nextMessageID += Int64(messages.count)
        let lastID = firstID + Int64(messages.count) - 1
        let version = try connection.transaction(.immediate, mapError: StoreError.init) { () throws(StoreError) -> Int64 in
            guard let seq = try seq(of: conversation) else { throw .conversationNotFound(conversation) }
            let before = try sqlite { () throws(SQLiteError) in
                try connection.cachedStatement(sql: "SELECT version FROM conversations WHERE seq = ?")
                    .firstRow(seq) { $0.int64(0) }
            } ?? 0
            let createdAt = Timestamp.now().millisecondsSinceEpoch
            var clientIDs = Set<String>()
            for (offset, new) in messages.enumerated() {
                if let clientID = new.clientID {
                    let used = try sqlite { () throws(SQLiteError) in
                        try connection.cachedStatement(sql: """
                            SELECT 1 FROM messages WHERE conversation_seq = ? AND client_id = ?
                            """).firstRow(seq, clientID) { _ in true } ?? false
                    }
                    guard !used, clientIDs.insert(clientID).inserted else { throw .clientIDConflict(clientID: clientID) }
                }
                if let replyTo = new.replyTo, try !exists(seq: seq, id: replyTo) {
                    throw .replyTargetNotFound(messageID: replyTo)
                }
                let version = before + Int64(offset) + 1
                let fingerprint = new.clientID == nil ? nil : StoredRows.clientFingerprint(sender: new.sender, body: new.body)
                try sqlite { () throws(SQLiteError) in
                    try connection.cachedStatement(sql: """
                        INSERT INTO messages (conversation_seq, id, sender, body, created_at, reply_to,
                                              client_id, client_fingerprint, created_version, version)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """).execute(seq, firstID + Int64(offset), new.sender, new.body, createdAt, new.replyTo,
                                     new.clientID, fingerprint, version, version)
                }
            }
            let after = before + Int64(messages.count)
            try sqlite { () throws(SQLiteError) in
                try connection.cachedStatement(sql: """
                    UPDATE conversations SET message_count = message_count + ?, oldest_id = coalesce(oldest_id, ?),
                                             newest_id = ?, version = ?
                    WHERE seq = ?
                    """).execute(messages.count, firstID, lastID, after, seq)
            }
            return after
        }
        return (firstID...lastID, version)
    }

    // MARK: - Helpers

    /// The conversation's internal key; nil when it does not exist (yet).
    private func seq(of id: ConversationID) throws(StoreError) -> Int64? {
        if let seq = committedSeqs[id.rawValue] ?? batchSeqs[id.rawValue] { return seq }
        let seq = try sqlite { () throws(SQLiteError) in
            try connection.cachedStatement(sql: "SELECT seq FROM conversations WHERE id = ?")
                .firstRow(id.rawValue) { $0.int64(0) }
        }
        if let seq {
            // Not created by this batch (that would be in batchSeqs), so committed.
            if committedSeqs.count >= Self.seqCacheCapacity { committedSeqs.removeAll(keepingCapacity: true) }
            committedSeqs[id.rawValue] = seq
        }
        return seq
    }

    private func existingMessage(_ messageID: Int64, in conversation: ConversationID) throws(StoreError)
        -> (seq: Int64, message: Message) {
        guard let seq = try seq(of: conversation) else { throw .conversationNotFound(conversation) }
        let message = try sqlite { () throws(SQLiteError) in
            try connection.cachedStatement(sql: """
                SELECT \(StoredRows.messageColumns) FROM messages WHERE conversation_seq = ? AND id = ?
                """).firstRow(seq, messageID) { StoredRows.message($0, in: conversation) }
        }
        guard let message else { throw .messageNotFound(conversation, messageID: messageID) }
        return (seq, message)
    }

    private func exists(seq: Int64, id: Int64) throws(StoreError) -> Bool {
        try sqlite { () throws(SQLiteError) in
            try connection.cachedStatement(sql: "SELECT 1 FROM messages WHERE conversation_seq = ? AND id = ?")
                .firstRow(seq, id) { _ in true } ?? false
        }
    }

    /// Bumps the conversation's version (and its counters when `appending`
    /// a new message id) and returns the new version.
    private func bumpVersion(seq: Int64, appending id: Int64?) throws(StoreError) -> Int64 {
        let version = try sqlite { () throws(SQLiteError) in
            if let id {
                return try connection.cachedStatement(sql: """
                    UPDATE conversations SET message_count = message_count + 1, oldest_id = coalesce(oldest_id, ?1),
                                             newest_id = ?1, version = version + 1
                    WHERE seq = ?2 RETURNING version
                    """).firstRow(id, seq) { $0.int64(0) }
            }
            return try connection.cachedStatement(sql: """
                UPDATE conversations SET version = version + 1 WHERE seq = ? RETURNING version
                """).firstRow(seq) { $0.int64(0) }
        }
        guard let version else { throw .storage(code: SQLITE_ERROR, message: "conversation row \(seq) vanished") }
        return version
    }

    private func unusedGeneratedID() throws(StoreError) -> ConversationID {
        for _ in 0..<8 {
            let id = Self.generatedID()
            if try seq(of: id) == nil { return id }
        }
        throw .storage(code: SQLITE_ERROR, message: "could not generate an unused conversation id")
    }

    /// 20 random characters of [A-Za-z0-9]: about 119 bits, so collisions
    /// are checked for but never expected.
    static func generatedID() -> ConversationID {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8)
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<20).map { _ in alphabet[Int(generator.next(upperBound: UInt64(alphabet.count)))] }
        // Every character is in the allowed set, so this cannot be nil.
        return ConversationID(String(decoding: bytes, as: UTF8.self))!
    }

    private static func loadNextMessageID(_ connection: Connection) throws(StoreError) -> Int64 {
        // max(id) is answered from the end of messages_by_id: O(log n).
        let maximum = try sqlite { () throws(SQLiteError) in
            try connection.cachedStatement(sql: "SELECT max(id) FROM messages").firstRow { $0.optionalInt64(0) } ?? nil
        }
        return (maximum ?? 0) + 1
    }
}
