import HistoryStore

/// Appending, editing and deleting messages, inside the batch transaction,
/// with the SQLite writer's semantics (SQLiteWriter+Messages): every check before
/// the one write, so a refused request leaves nothing and raises no error
/// that would abort the transaction.
extension PostgresBatch {
    /// Columns 0...8 of a message row, as `message(_:row:in:)` reads them.
    static let messageColumns = "id, sender, body, created_at, edited_at, deleted, reply_to, client_id, version"

    static func message(_ result: PGResult, row: Int, in conversation: ConversationID, from first: Int = 0) -> Message {
        Message(id: result.int64(row, first), conversationID: conversation, sender: result.string(row, first + 1),
                body: result.string(row, first + 2), createdAt: Timestamp(millisecondsSinceEpoch: result.int64(row, first + 3)),
                editedAt: result.optionalInt64(row, first + 4).map(Timestamp.init(millisecondsSinceEpoch:)),
                deleted: result.bool(row, first + 5), replyTo: result.optionalInt64(row, first + 6),
                clientID: result.optionalString(row, first + 7), version: result.int64(row, first + 8))
    }

    /// One round trip whatever the message carries: the `client_id`
    /// lookup, the reply target's check and the INSERT are one statement
    /// (`appendSQL`), which inserts only when both checks pass. The
    /// conversation is locked, so an append with the same `client_id`
    /// through another instance committed before (and is seen here) or
    /// waits for this batch: the unique index is never what refuses it.
    func append(_ new: NewMessage, to conversation: ConversationID,
                access: AccessCheck = .admin) throws(PostgresError) -> Result<AppendOutcome, StoreError> {
        guard let seq = try seq(of: conversation) else { return .failure(.conversationNotFound(conversation)) }
        if let refusal = try refusal(access, seq: seq, in: conversation) { return .failure(refusal) }
        guard var changed = counters[seq] else { return .failure(Self.vanished(conversation)) }
        if let error = changed.advanceVersion() ?? changed.checkRoomForAppend() { return .failure(error) }
        let fingerprint = new.clientID.map { _ in ClientFingerprint.of(sender: new.sender, body: new.body) }
        // Taken on the copy: it is kept (`touch`) only if the row is stored.
        let createdAt = changed.takeCreationTime(clock: .now())
        // (The id is not in the stored JSON; the INSERT takes it.)
        let tail = MessageJSONTail.encode(Message(appended: new, id: 0, in: conversation, createdAt: createdAt,
                                                  version: changed.version))
        let result = try connection.execute(connection.cachedStatement(sql: Self.appendSQL), [
            .int64(seq), .storedText(new.sender), .storedText(new.body), .int64(createdAt.millisecondsSinceEpoch),
            new.replyTo.map(PostgresValue.int64) ?? .null, .storedText(new.clientID),
            fingerprint.map(PostgresValue.int64) ?? .null, .int64(changed.version), .storedText(tail),
        ])
        guard result.rowCount == 1 else {
            // Neither stored nor found by client_id: the reply target is missing.
            return .failure(.replyTargetNotFound(messageID: new.replyTo ?? 0))
        }
        if result.int64(0, 0) == 1, let clientID = new.clientID {
            let message = Self.message(result, row: 0, in: conversation, from: 1)
            // A tombstone keeps no fingerprint of the text it erased and
            // answers every retry the same, whatever body it carries.
            guard message.deleted || result.optionalInt64(0, 10) == fingerprint else {
                return .failure(.clientIDConflict(clientID: clientID))
            }
            return .success(.existing(message))
        }
        switch takeActivity() {
        case .success(let place): changed.activityPlace = place
        case .failure(let error): return .failure(error)
        }
        let id = result.int64(0, 1)
        let message = Message(appended: new, id: id, in: conversation, createdAt: createdAt, version: changed.version)
        changeLog.append(.message(.created, id: id, seq: seq, activity: changed.activityPlace ?? activityTaken))
        if let clientID = new.clientID { appendedClientIDs[seq, default: []].insert(clientID) }
        changed.appended += 1
        changed.firstAppendedID = changed.firstAppendedID ?? id
        changed.lastAppendedID = id
        touch(changed)
        changedIDs[seq, default: []].append(id)
        return .success(.created(message))
    }

    /// `$1` seq, `$2` sender, `$3` body, `$4` created_at, `$5` reply_to,
    /// `$6` client_id, `$7` its fingerprint, `$8` the new version, `$9` the
    /// stored JSON. One row:
    /// kind 0 and the new id (nextval taken under the conversation's lock,
    /// so ids of one conversation become visible in increasing order), or
    /// kind 1 and the earlier message with this client_id
    /// (`messageColumns`, then its fingerprint); no row when the reply
    /// target is missing.
    static let appendSQL = """
        WITH earlier AS (
            SELECT \(messageColumns), client_fingerprint FROM messages
            WHERE $6::bytea IS NOT NULL AND conversation_seq = $1::bigint AND client_id = $6::bytea),
        inserted AS (
            INSERT INTO messages (conversation_seq, id, sender, body, created_at, reply_to,
                                  client_id, client_fingerprint, created_version, version, json_tail)
            SELECT $1::bigint, nextval('message_ids'), $2::bytea, $3::bytea, $4::bigint, $5::bigint,
                   $6::bytea, $7::bigint, $8::bigint, $8::bigint, $9::bytea
            WHERE NOT EXISTS (SELECT 1 FROM earlier)
              AND ($5::bigint IS NULL OR EXISTS (SELECT 1 FROM messages WHERE conversation_seq = $1::bigint AND id = $5::bigint))
            RETURNING id)
        SELECT 0, id, NULL::bytea, NULL::bytea, NULL::bigint, NULL::bigint, NULL::boolean, NULL::bigint, NULL::bytea,
               NULL::bigint, NULL::bigint FROM inserted
        UNION ALL
        SELECT 1, \(messageColumns), client_fingerprint FROM earlier
        """

    func edit(messageID: Int64, in conversation: ConversationID, body: String,
              access: AccessCheck = .admin) throws(PostgresError) -> Result<Message, StoreError> {
        let found: (seq: Int64, message: Message)
        switch try existingMessage(messageID, in: conversation, access: access) {
        case .success(let value): found = value
        case .failure(let error): return .failure(error)
        }
        guard !found.message.deleted else { return .failure(.messageDeleted(messageID: messageID)) }
        guard var changed = counters[found.seq] else { return .failure(Self.vanished(conversation)) }
        if let error = changed.advanceVersion() { return .failure(error) }
        switch takeActivity() {
        case .success(let place): changed.activityPlace = place
        case .failure(let error): return .failure(error)
        }
        let editedAt = Timestamp.now()
        var edited = found.message
        edited.body = body
        edited.editedAt = editedAt
        edited.version = changed.version
        try connection.execute(connection.cachedStatement(sql: """
            UPDATE messages SET body = $1, edited_at = $2, version = $3, json_tail = $6 WHERE conversation_seq = $4 AND id = $5
            """), [.storedText(body), .int64(editedAt.millisecondsSinceEpoch), .int64(changed.version),
                   .int64(found.seq), .int64(messageID), .storedText(MessageJSONTail.encode(edited))])
        touch(changed)
        changedIDs[found.seq, default: []].append(messageID)
        changeLog.append(.message(.edited, id: messageID, seq: found.seq, activity: changed.activityPlace ?? activityTaken))
        storedClientIDs[found.seq] = nil
        return .success(edited)
    }

    /// Tombstones the message, erasing its body and the `client_id`
    /// fingerprint (derived from the text); the `client_id` stays, so a
    /// retry of the original post is answered with the tombstone. A
    /// tombstone is answered unchanged (no version bump).
    func delete(messageID: Int64, in conversation: ConversationID,
                access: AccessCheck = .admin) throws(PostgresError) -> Result<Message, StoreError> {
        let found: (seq: Int64, message: Message)
        switch try existingMessage(messageID, in: conversation, access: access) {
        case .success(let value): found = value
        case .failure(let error): return .failure(error)
        }
        guard !found.message.deleted else { return .success(found.message) }
        guard var changed = counters[found.seq] else { return .failure(Self.vanished(conversation)) }
        if let error = changed.advanceVersion() { return .failure(error) }
        switch takeActivity() {
        case .success(let place): changed.activityPlace = place
        case .failure(let error): return .failure(error)
        }
        var tombstone = found.message
        tombstone.body = ""
        tombstone.deleted = true
        tombstone.version = changed.version
        try connection.execute(connection.cachedStatement(sql: """
            UPDATE messages SET body = '', client_fingerprint = NULL, deleted = true, version = $1, json_tail = $4
            WHERE conversation_seq = $2 AND id = $3
            """), [.int64(changed.version), .int64(found.seq), .int64(messageID), .storedText(MessageJSONTail.encode(tombstone))])
        touch(changed)
        changedIDs[found.seq, default: []].append(messageID)
        changeLog.append(.message(.deleted, id: messageID, seq: found.seq, activity: changed.activityPlace ?? activityTaken))
        storedClientIDs[found.seq] = nil
        return .success(tombstone)
    }

    // MARK: - Lookups

    /// The message an edit or delete names, once `access` allows it (the
    /// author read in this transaction): a stranger is refused before
    /// learning whether the message exists.
    private func existingMessage(_ messageID: Int64, in conversation: ConversationID,
                                 access: AccessCheck) throws(PostgresError) -> Result<(seq: Int64, message: Message), StoreError> {
        guard let seq = try seq(of: conversation) else { return .failure(.conversationNotFound(conversation)) }
        let result = try connection.execute(connection.cachedStatement(sql: """
            SELECT \(Self.messageColumns) FROM messages WHERE conversation_seq = $1 AND id = $2
            """), [.int64(seq), .int64(messageID)])
        let message = result.rowCount == 1 ? Self.message(result, row: 0, in: conversation) : nil
        if let refusal = try refusal(access, seq: seq, in: conversation, author: message?.sender) { return .failure(refusal) }
        guard let message else { return .failure(.messageNotFound(conversation, messageID: messageID)) }
        return .success((seq, message))
    }

    /// A locked conversation without its counters: cannot happen (both are
    /// recorded together), reported rather than trapped on.
    static func vanished(_ conversation: ConversationID) -> StoreError {
        .storageFailure("PostgreSQL: the counters of conversation '\(conversation.rawValue)' were not read with its lock")
    }
}
