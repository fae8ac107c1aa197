import HistoryStore
/// Appending, editing and deleting messages, inside the batch transaction;
/// each makes at most one write, after all of its checks passed, and that
/// write sets the row's stored JSON (`json_tail`, `MessageJSONTail`) from
/// the same `Message` it answers with, so a page shows what the write
/// answered.
extension SQLiteWriter {
    func append(_ new: NewMessage, to conversation: ConversationID, access: AccessCheck = .admin) throws(StoreError) -> AppendOutcome {
        guard let seq = try seq(of: conversation) else { throw .conversationNotFound(conversation) }
        try check(access, seq: seq, in: conversation)
        var fingerprint: Int64?
        if let clientID = new.clientID {
            let posted = ClientFingerprint.of(sender: new.sender, body: new.body)
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
                // A tombstone keeps no fingerprint of the text it erased, and
                // answers every retry the same, whatever body it carries: a
                // 409 for a wrong body would confirm a guess of the deleted
                // text.
                guard earlier.message.deleted || earlier.fingerprint == posted else {
                    throw .clientIDConflict(clientID: clientID)
                }
                return .existing(earlier.message)
            }
        }
        if let replyTo = new.replyTo, try !exists(seq: seq, id: replyTo) {
            throw .replyTargetNotFound(messageID: replyTo)
        }
        var counters = try self.counters(seq: seq, id: conversation)
        try counters.advanceVersion()
        try counters.checkRoomForAppend()
        counters.activity = try takeActivity()
        // Taken before the INSERT and never given back: if the statement
        // fails the id is simply skipped (gaps are allowed, reuse is not).
        let id = try takeMessageIDs(1).lowerBound
        let message = Message(appended: new, id: id, in: conversation, createdAt: creationTime(), version: counters.version)
        try sqlite { () throws(SQLiteError) in
            try connection.cachedStatement(sql: """
                INSERT INTO messages (place, sender, body, created_at, reply_to,
                                      client_id, client_fingerprint, created_version, version, json_tail)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """).execute(MessagePlace.of(seq: seq, id: id), new.sender, new.body, message.createdAt.millisecondsSinceEpoch,
                             new.replyTo, new.clientID, fingerprint, counters.version, counters.version,
                             MessageJSONTail.encode(message))
        }
        counters.appended += 1
        counters.firstAppendedID = counters.firstAppendedID ?? id
        counters.lastAppendedID = id
        pending[seq] = counters
        batchChanges.append(.message(.created, id: id, seq: seq, activity: counters.activity))
        return .created(message)
    }

    func edit(messageID: Int64, in conversation: ConversationID, body: String,
              access: AccessCheck = .admin) throws(StoreError) -> Message {
        let (seq, current) = try existingMessage(messageID, in: conversation, access: access)
        guard !current.deleted else { throw .messageDeleted(messageID: messageID) }
        var counters = try self.counters(seq: seq, id: conversation)
        try counters.advanceVersion()
        counters.activity = try takeActivity()
        var edited = current
        edited.body = body
        edited.editedAt = Timestamp.now()
        edited.version = counters.version
        try sqlite { () throws(SQLiteError) in
            try connection.cachedStatement(sql: """
                UPDATE messages SET body = ?, edited_at = ?, version = ?, json_tail = ? WHERE place = ?
                """).execute(body, edited.editedAt?.millisecondsSinceEpoch, counters.version, MessageJSONTail.encode(edited),
                             MessagePlace.of(seq: seq, id: messageID))
        }
        pending[seq] = counters
        batchChanges.append(.message(.edited, id: messageID, seq: seq, activity: counters.activity))
        return edited
    }

    /// Tombstones the message, erasing everything derived from its text: the
    /// body and the `client_id` fingerprint (of sender and body); the
    /// `client_id` itself stays, so a retry of the original post is still
    /// answered with the tombstone instead of posting it again. A tombstone
    /// is answered unchanged (no version bump).
    func delete(messageID: Int64, in conversation: ConversationID, access: AccessCheck = .admin) throws(StoreError) -> Message {
        let (seq, current) = try existingMessage(messageID, in: conversation, access: access)
        guard !current.deleted else { return current }
        var counters = try self.counters(seq: seq, id: conversation)
        try counters.advanceVersion()
        counters.activity = try takeActivity()
        var tombstone = current
        tombstone.body = ""
        tombstone.deleted = true
        tombstone.version = counters.version
        try sqlite { () throws(SQLiteError) in
            try connection.cachedStatement(sql: """
                UPDATE messages SET body = '', client_fingerprint = NULL, deleted = 1, version = ?, json_tail = ?
                WHERE place = ?
                """).execute(counters.version, MessageJSONTail.encode(tombstone), MessagePlace.of(seq: seq, id: messageID))
        }
        pending[seq] = counters
        batchChanges.append(.message(.deleted, id: messageID, seq: seq, activity: counters.activity))
        return tombstone
    }

    // MARK: - Lookups

    /// The message an edit or delete names, once `access` allows it: the
    /// caller's role and the message's author are read in this transaction,
    /// and a stranger is refused before learning whether the message exists.
    private func existingMessage(_ messageID: Int64, in conversation: ConversationID,
                                 access: AccessCheck) throws(StoreError) -> (seq: Int64, message: Message) {
        guard let seq = try seq(of: conversation) else { throw .conversationNotFound(conversation) }
        var message: Message?
        if MessagePlace.holds(messageID) {
            message = try sqlite { () throws(SQLiteError) in
                try connection.cachedStatement(sql: """
                    SELECT \(StoredRows.messageColumns) FROM messages WHERE place = ?
                    """).firstRow(MessagePlace.of(seq: seq, id: messageID)) { StoredRows.message($0, in: conversation) }
            }
        }
        try check(access, seq: seq, in: conversation, author: message?.sender)
        guard let message else { throw .messageNotFound(conversation, messageID: messageID) }
        return (seq, message)
    }

    func exists(seq: Int64, id: Int64) throws(StoreError) -> Bool {
        guard MessagePlace.holds(id) else { return false }
        return try sqlite { () throws(SQLiteError) in
            try connection.cachedStatement(sql: "SELECT 1 FROM messages WHERE place = ?")
                .firstRow(MessagePlace.of(seq: seq, id: id)) { _ in true } ?? false
        }
    }
}
