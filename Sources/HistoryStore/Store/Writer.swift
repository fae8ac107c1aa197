import CSQLite
import Dispatch

/// The one connection that writes, and the serial queue that owns it.
///
/// Everything that changes the database runs here: group-committed batches
/// (`perform`) and the bulk loader.
/// (A per-request SAVEPOINT was measured and dropped: SAVEPOINT/RELEASE and
/// the sub-journal copies of every touched 8 KiB page cost about as much as
/// the INSERT itself, and protect nothing when each request makes one
/// atomic change.) Message ids are allocated here, inside
/// the writing transaction, so they increase in commit order (guarantee 2).
///
/// The use of `@unchecked Sendable` is safe for this type because:
/// - `connection`, `nextMessageID`, `committedSeqs`, `batchSeqs` and `pending` are only
///   touched by code running on `queue` (every entry point is called through
///   `sync` or `queue.async`, and `perform`/`bulkAppend` check it with
///   `dispatchPrecondition`);
/// - `queue` itself is a `let` of a thread-safe type.
final class Writer: @unchecked Sendable {
    let queue = DispatchQueue(label: "history-store.writer", qos: .userInitiated)
    let connection: Connection
    /// The next id to hand out: never below `max(id) + 1`, never lowered,
    /// so an id that might have reached a caller is never reused.
    private var nextMessageID: Int64
    /// Public id -> seq for committed conversations (immutable mapping).
    private var committedSeqs: [String: Int64] = [:]
    /// Conversations created by the batch being written; kept apart until
    /// its COMMIT succeeds.
    private var batchSeqs: [String: Int64] = [:]

    private static let seqCacheCapacity = 100_000

    private static let queueKey = DispatchSpecificKey<ObjectIdentifier>()

    init(connection: Connection) throws(StoreError) {
        self.connection = connection
        self.nextMessageID = try Self.loadNextMessageID(connection)
        queue.setSpecific(key: Self.queueKey, value: ObjectIdentifier(self))
    }

    /// Runs `body` on the writer queue and waits for it; runs it at once when
    /// already there (a completion handler that drops the last reference to
    /// the store closes it from this queue, and `sync` would deadlock).
    func sync<T>(_ body: () -> T) -> T {
        if DispatchQueue.getSpecific(key: Self.queueKey) == ObjectIdentifier(self) {
            return body()
        }
        return queue.sync(execute: body)
    }

    /// Runs `body` with the writing connection, on the writer queue: for
    /// tests that must reach below the store, e.g. to make the file full.
    func withConnection<T>(_ body: (Connection) -> T) -> T {
        sync { body(connection) }
    }

    /// Closes the connection, after whatever the queue is running.
    func close() {
        sync { connection.close() }
    }

    // MARK: - Group commit

    /// What a batch produced: the answers to give once it is durable, and
    /// each touched conversation's new version.
    struct BatchOutcome: Sendable {
        var answers: [@Sendable () -> Void] = []
        var versions: [ConversationID: Int64] = [:]
        var committed = false
    }

    /// A touched conversation's counters while its batch is being written:
    /// kept here and written back with one UPDATE per conversation just
    /// before COMMIT, instead of one UPDATE per message.
    private struct PendingCounters {
        let id: ConversationID
        var version: Int64
        var appended: Int64 = 0
        var firstAppendedID: Int64?
        var lastAppendedID: Int64?
    }

    /// Keyed by seq; empty between batches.
    private var pending: [Int64: PendingCounters] = [:]

    /// Writes every request of `batch` in one transaction. A request that
    /// fails (unknown conversation, missing reply target, conflicting client
    /// id, tombstone edit) is answered with its error and leaves nothing
    /// behind, while the others commit: every request makes at most one
    /// change to the file (one INSERT or UPDATE, atomic by itself in SQLite),
    /// and only after all of its checks passed; its counters are applied to
    /// `pending` only once that statement succeeded. When BEGIN, the
    /// counters' write-back or COMMIT fails, or SQLite rolled the transaction
    /// back on its own, every request is answered `.storage` and the
    /// writer's caches are reloaded.
    func perform(_ batch: [WriteRequest]) -> BatchOutcome {
        dispatchPrecondition(condition: .onQueue(queue))
        var outcome = BatchOutcome()
        pending.removeAll(keepingCapacity: true)
        do throws(SQLiteError) {
            try connection.cachedStatement(sql: "BEGIN IMMEDIATE").execute()
        } catch {
            return failed(batch, with: StoreError(error))
        }
        for request in batch {
            let failure: StoreError?
            switch request {
            case .createConversation(let id, let title, let owner, let completion):
                let result = Result { () throws(StoreError) in try createConversation(id: id, title: title, owner: owner) }
                outcome.answers.append { completion(result) }
                failure = result.failure
            case .append(let message, let conversation, let completion):
                let result = Result { () throws(StoreError) in try append(message, to: conversation) }
                outcome.answers.append { completion(result) }
                failure = result.failure
            case .edit(let messageID, let conversation, let body, let completion):
                let result = Result { () throws(StoreError) in try edit(messageID: messageID, in: conversation, body: body) }
                outcome.answers.append { completion(result) }
                failure = result.failure
            case .delete(let messageID, let conversation, let completion):
                let result = Result { () throws(StoreError) in try delete(messageID: messageID, in: conversation) }
                outcome.answers.append { completion(result) }
                failure = result.failure
            case .putMember(let user, let role, let conversation, let completion):
                let result = Result { () throws(StoreError) in try putMember(user, role: role, in: conversation) }
                outcome.answers.append { completion(result) }
                failure = result.failure
            case .removeMember(let user, let conversation, let completion):
                let result = Result { () throws(StoreError) in try removeMember(user, from: conversation) }
                outcome.answers.append { completion(result) }
                failure = result.failure
            }
            // Some errors (SQLITE_FULL, IOERR, NOMEM...) make SQLite roll the
            // whole transaction back; later statements would then commit one
            // by one. Stop here: nothing of this batch is in the file.
            if case .storage = failure, connection.isAutocommit {
                return failed(batch, with: failure!)
            }
        }
        do throws(SQLiteError) {
            try writeBackCounters()
            try connection.cachedStatement(sql: "COMMIT").execute()
        } catch {
            connection.rollback()
            return failed(batch, with: StoreError(error))
        }
        for counters in pending.values {
            outcome.versions[counters.id] = counters.version
        }
        pending.removeAll(keepingCapacity: true)
        committedSeqs.merge(batchSeqs) { _, new in new }
        batchSeqs.removeAll()
        outcome.committed = true
        return outcome
    }

    private func writeBackCounters() throws(SQLiteError) {
        let update = try connection.cachedStatement(sql: """
            UPDATE conversations SET message_count = message_count + ?, oldest_id = coalesce(oldest_id, ?),
                                     newest_id = coalesce(?, newest_id), version = ?
            WHERE seq = ?
            """)
        for (seq, counters) in pending {
            try update.execute(counters.appended, counters.firstAppendedID, counters.lastAppendedID, counters.version, seq)
        }
    }

    private func failed(_ batch: [WriteRequest], with error: StoreError) -> BatchOutcome {
        connection.rollback()
        resetCaches()
        var outcome = BatchOutcome()
        outcome.answers = batch.map { request in { request.fail(error) } }
        return outcome
    }

    /// After a failed transaction nothing the writer remembers from it can
    /// be trusted: forget the batch's conversations and counters, and move
    /// the next id past anything that may have reached the file.
    private func resetCaches() {
        batchSeqs.removeAll()
        pending.removeAll()
        if let stored = try? Self.loadNextMessageID(connection) {
            nextMessageID = max(nextMessageID, stored)
        }
    }

    /// The batch's counters of the conversation, read at its first touch.
    private func counters(seq: Int64, id: ConversationID) throws(StoreError) -> PendingCounters {
        if let counters = pending[seq] { return counters }
        let version = try sqlite { () throws(SQLiteError) in
            try connection.cachedStatement(sql: "SELECT version FROM conversations WHERE seq = ?")
                .firstRow(seq) { $0.int64(0) }
        }
        guard let version else { throw .storage(code: SQLITE_ERROR, message: "conversation row \(seq) vanished") }
        return PendingCounters(id: id, version: version)
    }

    // MARK: - Operations (inside the batch transaction; at most one write each)

    /// With an `owner`, two rows are written (the conversation and its
    /// owner), so they are made one unit with a savepoint; without one the
    /// single INSERT needs none.
    private func createConversation(id: ConversationID?, title: String?, owner: UserID?) throws(StoreError) -> Conversation {
        guard let owner else {
            let (seq, conversation) = try insertConversation(id: id, title: title)
            batchSeqs[conversation.id.rawValue] = seq
            return conversation
        }
        let (seq, conversation) = try asOneUnit { () throws(StoreError) in
            let (seq, conversation) = try insertConversation(id: id, title: title)
            try insertMember(Member(userID: owner, role: .owner, joinedAt: conversation.createdAt), seq: seq)
            return (seq, conversation)
        }
        // Only once both rows stand: a rolled-back seq must not be remembered.
        batchSeqs[conversation.id.rawValue] = seq
        return conversation
    }

    /// Writes the conversation row; the caller records its seq in `batchSeqs`.
    private func insertConversation(id: ConversationID?, title: String?) throws(StoreError)
        -> (seq: Int64, conversation: Conversation) {
        let title = title?.isEmpty == false ? title : nil
        let conversationID: ConversationID
        if let id {
            guard try seq(of: id) == nil else { throw .conversationExists(id) }
            conversationID = id
        } else {
            conversationID = try unusedGeneratedID()
        }
        let createdAt = Timestamp.now()
        // Chosen here rather than by SQLite, so that a seq the message
        // layout cannot hold is refused before anything is written.
        let seq = try sqlite { () throws(SQLiteError) in
            try connection.cachedStatement(sql: "SELECT coalesce(max(seq), 0) + 1 FROM conversations")
                .firstRow { $0.int64(0) } ?? 1
        }
        guard seq <= MessagePlace.maximumSeq else {
            throw .storage(code: SQLITE_FULL, message: "no room for another conversation: the store holds \(MessagePlace.maximumSeq)")
        }
        try sqlite { () throws(SQLiteError) in
            try connection.cachedStatement(sql: """
                INSERT INTO conversations (seq, id, title, created_at) VALUES (?, ?, ?, ?)
                """).execute(seq, conversationID.rawValue, title, createdAt.millisecondsSinceEpoch)
        }
        return (seq, Conversation(id: conversationID, title: title, createdAt: createdAt, messageCount: 0,
                                  oldestID: nil, newestID: nil, version: 0))
    }

    private func append(_ new: NewMessage, to conversation: ConversationID) throws(StoreError) -> AppendOutcome {
        guard let seq = try seq(of: conversation) else { throw .conversationNotFound(conversation) }
        var fingerprint: Int64?
        if let clientID = new.clientID {
            let posted = StoredRows.clientFingerprint(sender: new.sender, body: new.body)
            fingerprint = posted
            let earlier = try sqlite { () throws(SQLiteError) in
                try connection.cachedStatement(sql: """
                    SELECT \(StoredRows.messageColumns), client_fingerprint FROM messages
                    WHERE conversation_seq = ? AND client_id = ?
                    """).firstRow(seq, clientID) { row in
                    (message: StoredRows.message(row, in: conversation), fingerprint: row.optionalInt64(9))
                }
            }
            if let earlier {
                guard earlier.fingerprint == posted else { throw .clientIDConflict(clientID: clientID) }
                return .existing(earlier.message)
            }
        }
        if let replyTo = new.replyTo, try !exists(seq: seq, id: replyTo) {
            throw .replyTargetNotFound(messageID: replyTo)
        }
        guard nextMessageID <= MessagePlace.maximumID else { throw Self.idsExhausted }
        var counters = try self.counters(seq: seq, id: conversation)
        counters.version += 1
        // Taken before the INSERT and never given back: if the statement
        // fails the id is simply skipped (gaps are allowed, reuse is not).
        let id = nextMessageID
        nextMessageID += 1
        let createdAt = Timestamp.now()
        try sqlite { () throws(SQLiteError) in
            try connection.cachedStatement(sql: """
                INSERT INTO messages (place, sender, body, created_at, reply_to,
                                      client_id, client_fingerprint, created_version, version)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """).execute(MessagePlace.of(seq: seq, id: id), new.sender, new.body, createdAt.millisecondsSinceEpoch, new.replyTo,
                             new.clientID, fingerprint, counters.version, counters.version)
        }
        counters.appended += 1
        counters.firstAppendedID = counters.firstAppendedID ?? id
        counters.lastAppendedID = id
        pending[seq] = counters
        return .created(Message(id: id, conversationID: conversation, sender: new.sender, body: new.body,
                                createdAt: createdAt, editedAt: nil, deleted: false, replyTo: new.replyTo,
                                clientID: new.clientID, version: counters.version))
    }

    private func edit(messageID: Int64, in conversation: ConversationID, body: String) throws(StoreError) -> Message {
        let (seq, current) = try existingMessage(messageID, in: conversation)
        guard !current.deleted else { throw .messageDeleted(messageID: messageID) }
        var counters = try self.counters(seq: seq, id: conversation)
        counters.version += 1
        let editedAt = Timestamp.now()
        try sqlite { () throws(SQLiteError) in
            try connection.cachedStatement(sql: """
                UPDATE messages SET body = ?, edited_at = ?, version = ? WHERE place = ?
                """).execute(body, editedAt.millisecondsSinceEpoch, counters.version, MessagePlace.of(seq: seq, id: messageID))
        }
        pending[seq] = counters
        var edited = current
        edited.body = body
        edited.editedAt = editedAt
        edited.version = counters.version
        return edited
    }

    /// Tombstones the message; a tombstone is answered unchanged (no version bump).
    private func delete(messageID: Int64, in conversation: ConversationID) throws(StoreError) -> Message {
        let (seq, current) = try existingMessage(messageID, in: conversation)
        guard !current.deleted else { return current }
        var counters = try self.counters(seq: seq, id: conversation)
        counters.version += 1
        try sqlite { () throws(SQLiteError) in
            try connection.cachedStatement(sql: """
                UPDATE messages SET body = '', deleted = 1, version = ? WHERE place = ?
                """).execute(counters.version, MessagePlace.of(seq: seq, id: messageID))
        }
        pending[seq] = counters
        var tombstone = current
        tombstone.body = ""
        tombstone.deleted = true
        tombstone.version = counters.version
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
        guard nextMessageID + Int64(messages.count) - 1 <= MessagePlace.maximumID else { throw Self.idsExhausted }
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
                        INSERT INTO messages (place, sender, body, created_at, reply_to,
                                              client_id, client_fingerprint, created_version, version)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """).execute(MessagePlace.of(seq: seq, id: firstID + Int64(offset)), new.sender, new.body, createdAt, new.replyTo,
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
    func seq(of id: ConversationID) throws(StoreError) -> Int64? {
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
        guard MessagePlace.holds(messageID) else { throw .messageNotFound(conversation, messageID: messageID) }
        let message = try sqlite { () throws(SQLiteError) in
            try connection.cachedStatement(sql: """
                SELECT \(StoredRows.messageColumns) FROM messages WHERE place = ?
                """).firstRow(MessagePlace.of(seq: seq, id: messageID)) { StoredRows.message($0, in: conversation) }
        }
        guard let message else { throw .messageNotFound(conversation, messageID: messageID) }
        return (seq, message)
    }

    private func exists(seq: Int64, id: Int64) throws(StoreError) -> Bool {
        guard MessagePlace.holds(id) else { return false }
        return try sqlite { () throws(SQLiteError) in
            try connection.cachedStatement(sql: "SELECT 1 FROM messages WHERE place = ?")
                .firstRow(MessagePlace.of(seq: seq, id: id)) { _ in true } ?? false
        }
    }

    /// Past `MessagePlace.maximumID` the store is full for messages: a
    /// storage-full error (507 over HTTP), nothing written.
    private static let idsExhausted = StoreError.storage(
        code: SQLITE_FULL, message: "no room for another message: ids end at \(MessagePlace.maximumID)")

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

extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
