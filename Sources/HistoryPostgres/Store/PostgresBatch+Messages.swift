import HistoryStore

/// Appending, editing and deleting messages, inside the batch transaction,
/// with the SQLite writer's semantics (Writer+Messages): every check before
/// the one write, so a refused request leaves nothing and raises no error
/// that would abort the transaction.
extension PostgresBatch {
    /// Columns 0...8 of a message row, as `message(_:row:in:)` reads them.
    static let messageColumns = "id, sender, body, created_at, edited_at, deleted, reply_to, client_id, version"

    static func message(_ result: PGResult, row: Int, in conversation: ConversationID) -> Message {
        Message(id: result.int64(row, 0), conversationID: conversation, sender: result.string(row, 1),
                body: result.string(row, 2), createdAt: Timestamp(millisecondsSinceEpoch: result.int64(row, 3)),
                editedAt: result.optionalInt64(row, 4).map(Timestamp.init(millisecondsSinceEpoch:)),
                deleted: result.bool(row, 5), replyTo: result.optionalInt64(row, 6),
                clientID: result.optionalString(row, 7), version: result.int64(row, 8))
    }

    func append(_ new: NewMessage, to conversation: ConversationID) throws(PostgresError) -> Result<AppendOutcome, StoreError> {
        guard let seq = try seq(of: conversation) else { return .failure(.conversationNotFound(conversation)) }
        var fingerprint: Int64?
        if let clientID = new.clientID {
            let posted = StoredRows.clientFingerprint(sender: new.sender, body: new.body)
            fingerprint = posted
            // The conversation is locked: an append with this client_id
            // through another instance committed before (and is seen
            // here) or waits for this batch.
            let earlier = try connection.execute(connection.cachedStatement(sql: """
                SELECT \(Self.messageColumns), client_fingerprint FROM messages
                WHERE conversation_seq = $1 AND client_id = $2
                """), [.int64(seq), .text(clientID)])
            if earlier.rowCount == 1 {
                let message = Self.message(earlier, row: 0, in: conversation)
                // A tombstone keeps no fingerprint of the text it erased and
                // answers every retry the same, whatever body it carries.
                guard message.deleted || earlier.optionalInt64(0, 9) == posted else {
                    return .failure(.clientIDConflict(clientID: clientID))
                }
                return .success(.existing(message))
            }
        }
        if let replyTo = new.replyTo, try !exists(seq: seq, id: replyTo) {
            return .failure(.replyTargetNotFound(messageID: replyTo))
        }
        guard var changed = counters[seq] else { return .failure(Self.vanished(conversation)) }
        if let error = changed.advanceVersion() ?? changed.checkRoomForAppend() { return .failure(error) }
        switch takeActivity() {
        case .success(let value): changed.activity = value
        case .failure(let error): return .failure(error)
        }
        let createdAt = Timestamp.now()
        // The id is taken while the conversation is locked, so ids of one
        // conversation become visible in increasing order.
        let inserted = try connection.execute(connection.cachedStatement(sql: """
            INSERT INTO messages (conversation_seq, id, sender, body, created_at, reply_to,
                                  client_id, client_fingerprint, created_version, version)
            VALUES ($1, nextval('message_ids'), $2, $3, $4, $5, $6, $7, $8, $8)
            RETURNING id
            """), [.int64(seq), .text(new.sender), .text(new.body), .int64(createdAt.millisecondsSinceEpoch),
                   new.replyTo.map(PostgresValue.int64) ?? .null, new.clientID.map(PostgresValue.text) ?? .null,
                   fingerprint.map(PostgresValue.int64) ?? .null, .int64(changed.version)])
        let id = inserted.int64(0, 0)
        changed.appended += 1
        changed.firstAppendedID = changed.firstAppendedID ?? id
        changed.lastAppendedID = id
        touch(changed)
        changedIDs[seq, default: []].append(id)
        return .success(.created(Message(id: id, conversationID: conversation, sender: new.sender, body: new.body,
                                         createdAt: createdAt, editedAt: nil, deleted: false, replyTo: new.replyTo,
                                         clientID: new.clientID, version: changed.version)))
    }

    func edit(messageID: Int64, in conversation: ConversationID, body: String) throws(PostgresError) -> Result<Message, StoreError> {
        let found: (seq: Int64, message: Message)
        switch try existingMessage(messageID, in: conversation) {
        case .success(let value): found = value
        case .failure(let error): return .failure(error)
        }
        guard !found.message.deleted else { return .failure(.messageDeleted(messageID: messageID)) }
        guard var changed = counters[found.seq] else { return .failure(Self.vanished(conversation)) }
        if let error = changed.advanceVersion() { return .failure(error) }
        switch takeActivity() {
        case .success(let value): changed.activity = value
        case .failure(let error): return .failure(error)
        }
        let editedAt = Timestamp.now()
        try connection.execute(connection.cachedStatement(sql: """
            UPDATE messages SET body = $1, edited_at = $2, version = $3 WHERE conversation_seq = $4 AND id = $5
            """), [.text(body), .int64(editedAt.millisecondsSinceEpoch), .int64(changed.version), .int64(found.seq),
                   .int64(messageID)])
        touch(changed)
        changedIDs[found.seq, default: []].append(messageID)
        var edited = found.message
        edited.body = body
        edited.editedAt = editedAt
        edited.version = changed.version
        return .success(edited)
    }

    /// Tombstones the message, erasing its body and the `client_id`
    /// fingerprint (derived from the text); the `client_id` stays, so a
    /// retry of the original post is answered with the tombstone. A
    /// tombstone is answered unchanged (no version bump).
    func delete(messageID: Int64, in conversation: ConversationID) throws(PostgresError) -> Result<Message, StoreError> {
        let found: (seq: Int64, message: Message)
        switch try existingMessage(messageID, in: conversation) {
        case .success(let value): found = value
        case .failure(let error): return .failure(error)
        }
        guard !found.message.deleted else { return .success(found.message) }
        guard var changed = counters[found.seq] else { return .failure(Self.vanished(conversation)) }
        if let error = changed.advanceVersion() { return .failure(error) }
        switch takeActivity() {
        case .success(let value): changed.activity = value
        case .failure(let error): return .failure(error)
        }
        try connection.execute(connection.cachedStatement(sql: """
            UPDATE messages SET body = '', client_fingerprint = NULL, deleted = true, version = $1
            WHERE conversation_seq = $2 AND id = $3
            """), [.int64(changed.version), .int64(found.seq), .int64(messageID)])
        touch(changed)
        changedIDs[found.seq, default: []].append(messageID)
        var tombstone = found.message
        tombstone.body = ""
        tombstone.deleted = true
        tombstone.version = changed.version
        return .success(tombstone)
    }

    // MARK: - Lookups

    private func existingMessage(_ messageID: Int64, in conversation: ConversationID) throws(PostgresError)
        -> Result<(seq: Int64, message: Message), StoreError> {
        guard let seq = try seq(of: conversation) else { return .failure(.conversationNotFound(conversation)) }
        let result = try connection.execute(connection.cachedStatement(sql: """
            SELECT \(Self.messageColumns) FROM messages WHERE conversation_seq = $1 AND id = $2
            """), [.int64(seq), .int64(messageID)])
        guard result.rowCount == 1 else { return .failure(.messageNotFound(conversation, messageID: messageID)) }
        return .success((seq, Self.message(result, row: 0, in: conversation)))
    }

    func exists(seq: Int64, id: Int64) throws(PostgresError) -> Bool {
        try connection.execute(connection.cachedStatement(sql: """
            SELECT 1 FROM messages WHERE conversation_seq = $1 AND id = $2
            """), [.int64(seq), .int64(id)]).rowCount == 1
    }

    /// A locked conversation without its counters: cannot happen (both are
    /// recorded together), reported rather than trapped on.
    static func vanished(_ conversation: ConversationID) -> StoreError {
        .storageFailure("PostgreSQL: the counters of conversation '\(conversation.rawValue)' were not read with its lock")
    }
}
