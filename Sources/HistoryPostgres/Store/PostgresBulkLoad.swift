import HistoryStore

/// Loading many messages into one conversation in one transaction, outside
/// group commit (seeding, benchmarks): SQLiteWriter+BulkLoad, with the
/// same checks, counters and errors, and the batch's locks and notices.
///
/// Each message takes its own version and `activity` value, as if appended
/// one by one; the rows go in with multi-row INSERTs of `unnest`ed arrays
/// (a few statements for thousands of messages). A repeated or already
/// used `client_id` fails the whole load with `.clientIDConflict`, a
/// missing reply target with `.replyTargetNotFound`: nothing is written.
///
/// The ids come from `message_ids` while the conversation is locked. They
/// are consecutive unless another instance appended to another conversation
/// at the same moment (the sequence is shared); the range returned then
/// spans a few ids of that conversation too.
struct PostgresBulkLoad {
    let connection: PGConnection

    /// Rows per INSERT: bounds one statement's parameters (bodies are up to
    /// 16 KiB) while keeping round trips few.
    static let rowsPerStatement = 1_000

    typealias Loaded = (ids: ClosedRange<Int64>, commit: PostgresCommit)

    func append(_ messages: [NewMessage], to conversation: ConversationID) throws(PostgresError) -> Result<Loaded, StoreError> {
        try connection.execute(sql: "BEGIN ISOLATION LEVEL READ COMMITTED")
        let result: Result<Loaded, StoreError>
        do throws(PostgresError) {
            result = try load(messages, to: conversation)
        } catch {
            rollBack()
            throw error
        }
        guard case .success = result else {
            rollBack()
            return result
        }
        do throws(PostgresError) {
            try connection.execute(sql: "COMMIT")
        } catch where error.kind == .connectionLost {
            return .failure(.unavailable(reason: "the connection was lost during COMMIT, "
                + "so whether the messages were written is unknown (\(error.message))"))
        } catch {
            rollBack()
            throw error
        }
        return result
    }

    private func rollBack() {
        guard !connection.isBroken, connection.transactionStatus != .idle else { return }
        _ = try? connection.execute(sql: "ROLLBACK")
    }

    private func load(_ messages: [NewMessage], to conversation: ConversationID) throws(PostgresError) -> Result<Loaded, StoreError> {
        let locked = try connection.execute(connection.cachedStatement(sql: """
            SELECT seq, version, message_count, newest_created_at FROM conversations WHERE id = $1 FOR UPDATE
            """), [.text(conversation.rawValue)])
        guard locked.rowCount == 1 else { return .failure(.conversationNotFound(conversation)) }
        let seq = locked.int64(0, 0)
        let before = locked.int64(0, 1)
        let storedCount = locked.int64(0, 2)
        let count = Int64(messages.count)
        guard before <= Int64.max - count else {
            return .failure(.impossibleStoredValue("conversation '\(conversation.rawValue)' is at version \(before), "
                + "after which \(count) changes cannot be numbered"))
        }
        guard storedCount <= Int64.max - count else {
            return .failure(.impossibleStoredValue("conversation '\(conversation.rawValue)' counts \(storedCount) messages, "
                + "too many to count \(count) more"))
        }
        let ids = try connection.execute(connection.cachedStatement(sql: """
            SELECT nextval('message_ids') FROM generate_series(1, $1::bigint)
            """), [.int64(count)])
        let taken = (0..<ids.rowCount).map { ids.int64($0, 0) }.sorted()
        if let refusal = try check(messages, ids: taken, seq: seq) { return .failure(refusal) }

        // Not before the newest message (PostgresBatch+CreationTime).
        let createdAt = Timestamp(millisecondsSinceEpoch: max(Timestamp.now().millisecondsSinceEpoch,
                                                              locked.optionalInt64(0, 3) ?? 0))
        let insert = try connection.cachedStatement(sql: """
            INSERT INTO messages (conversation_seq, id, sender, body, created_at, reply_to,
                                  client_id, client_fingerprint, created_version, version, json_tail)
            SELECT $1, u.id, u.sender, u.body, $2, u.reply_to, u.client_id, u.fingerprint, u.version, u.version, u.tail
            FROM unnest($3::bigint[], $4::bytea[], $5::bytea[], $6::bigint[], $7::bytea[], $8::bigint[], $9::bigint[],
                        $10::bytea[])
                 AS u(id, sender, body, reply_to, client_id, fingerprint, version, tail)
            """)
        for start in stride(from: 0, to: messages.count, by: Self.rowsPerStatement) {
            let range = start..<min(start + Self.rowsPerStatement, messages.count)
            let chunk = messages[range]
            let tails = range.map { offset in
                MessageJSONTail.encode(Message(appended: messages[offset], id: taken[offset], in: conversation,
                                               createdAt: createdAt, version: before + Int64(offset) + 1))
            }
            try connection.execute(insert, [
                .int64(seq), .int64(createdAt.millisecondsSinceEpoch),
                .text(PostgresArrayLiteral.int64s(Array(taken[range]))),
                .storedTexts(chunk.map(\.sender)),
                .storedTexts(chunk.map(\.body)),
                .text(PostgresArrayLiteral.int64s(chunk.map(\.replyTo))),
                .storedTexts(chunk.map(\.clientID)),
                .text(PostgresArrayLiteral.int64s(chunk.map { new in
                    new.clientID == nil ? nil : ClientFingerprint.of(sender: new.sender, body: new.body)
                })),
                .text(PostgresArrayLiteral.int64s(range.map { before + Int64($0) + 1 })),
                .storedTexts(tails),
            ])
        }
        let after = before + count
        let firstID = taken[0]
        let lastID = taken[taken.count - 1]
        // After the conversation's lock, as every writer takes them.
        let counter = try connection.execute(connection.cachedStatement(sql: """
            UPDATE activity_counter SET value = value + $1 WHERE id = 1 RETURNING value
            """), [.int64(count)])
        let activity = counter.int64(0, 0)
        try connection.execute(connection.cachedStatement(sql: """
            UPDATE conversations SET message_count = message_count + $1, oldest_id = coalesce(oldest_id, $2),
                                     newest_id = $3, version = $4, activity = $5, newest_created_at = $7
            WHERE seq = $6
            """), [.int64(count), .int64(firstID), .int64(lastID), .int64(after), .int64(activity), .int64(seq),
                   .int64(createdAt.millisecondsSinceEpoch)])
        try connection.execute(connection.cachedStatement(sql: PostgresBulkChangeLog.listedIDsSQL),
                               [.int64(activity), .text(PostgresArrayLiteral.int64s(taken)), .int64(seq)])
        let notices: [ChangeNotice] = [
            .conversation(conversation, version: after, changedIDs: ChangedMessageIDs(taken).ranges),
            .inbox(activity: activity, conversations: [seq], users: []),
        ]
        let notify = try connection.cachedStatement(sql: ChangeNotice.notifySQL)
        for payload in ChangeNotice.payloads(notices) {
            try connection.execute(notify, [.text(ChangeNotice.channel), .text(payload)])
        }
        return .success((firstID...lastID, PostgresCommit(notices: notices, size: messages.count)))
    }

    /// The first refusal in load order, as the SQLite loader meets them: a
    /// `client_id` used before or twice in the load, a reply to a message
    /// neither stored nor earlier in the load.
    private func check(_ messages: [NewMessage], ids: [Int64], seq: Int64) throws(PostgresError) -> StoreError? {
        let clientIDs = messages.compactMap(\.clientID)
        var used = Set<String>()
        if !clientIDs.isEmpty {
            let found = try connection.execute(connection.cachedStatement(sql: """
                SELECT client_id FROM messages WHERE conversation_seq = $1 AND client_id = ANY($2::bytea[])
                """), [.int64(seq), .storedTexts(clientIDs)])
            used = Set((0..<found.rowCount).map { found.string($0, 0) })
        }
        let targets = messages.compactMap(\.replyTo)
        var stored = Set<Int64>()
        if !targets.isEmpty {
            let found = try connection.execute(connection.cachedStatement(sql: """
                SELECT id FROM messages WHERE conversation_seq = $1 AND id = ANY($2::bigint[])
                """), [.int64(seq), .text(PostgresArrayLiteral.int64s(targets))])
            stored = Set((0..<found.rowCount).map { found.int64($0, 0) })
        }
        var seen = Set<String>()
        var loaded = Set<Int64>()
        for (offset, new) in messages.enumerated() {
            if let clientID = new.clientID, used.contains(clientID) || !seen.insert(clientID).inserted {
                return .clientIDConflict(clientID: clientID)
            }
            if let replyTo = new.replyTo, !stored.contains(replyTo), !loaded.contains(replyTo) {
                return .replyTargetNotFound(messageID: replyTo)
            }
            loaded.insert(ids[offset])
        }
        return nil
    }
}
