import HistoryStore

/// Seeding a PostgreSQL database with COPY (`history-load seed --direct
/// postgres://...`): millions of messages in seconds, leaving every row and
/// counter exactly as appends would have (ids from `message_ids`, one
/// version per message, `message_count`, `oldest_id`, `newest_id`,
/// `activity`), so servers afterwards serve and append normally.
///
/// One conversation at a time, in one transaction: its row is locked as
/// every writer locks it, the ids for all its messages are taken from the
/// sequence as one block (`nextval` then `setval` past the block), the rows
/// are streamed with COPY, then the counters and the change log are
/// written and the change announced (`pg_notify`), as `PostgresBulkLoad`
/// does.
///
/// Unlike `bulkAppend` it checks nothing the database does not: a reply
/// must point at a stored message or one earlier in the load (the caller
/// knows the ids: `begin` returns the first). The block of ids is
/// consecutive only if no server appends while it is taken (another
/// session's `nextval` between the two calls would take an id inside it):
/// seed before starting servers, or while none appends.
package final class PostgresCopyLoad {
    private let connection: PGConnection
    private var current: Loading?
    private var rows = PostgresCopyRows(reservingCapacity: 1 << 20)

    private struct Loading {
        let conversation: ConversationID
        let seq: Int64
        let firstID: Int64
        let count: Int64
        let versionBefore: Int64
        var loaded: Int64 = 0
        /// The latest time stored so far, the conversation's newest
        /// message's at first: no message gets an earlier one
        /// (PostgresBatch+CreationTime).
        var newestCreatedAt: Int64
    }

    /// Flushed to the server when the buffer passes this many bytes.
    private static let flushBytes = 1 << 20

    private static let copySQL = """
        COPY messages (conversation_seq, id, sender, body, created_at, reply_to, client_id,
                       client_fingerprint, created_version, version, json_tail) FROM STDIN
        """

    /// Opens a session of its own; the schema must be there (open a
    /// `PostgresHistoryStore` on the database first: it migrates).
    package init(uri: String) throws(PostgresError) {
        connection = try PGConnection(uri: uri, applicationName: "history-load")
    }

    package func close() {
        if current != nil { _ = try? connection.execute(sql: "ROLLBACK") }
        current = nil
        connection.close()
    }

    /// Starts loading `count` messages into `conversation`: locks it, takes
    /// their ids, starts the COPY.
    /// - Returns: the ids the messages will get, in order.
    package func begin(_ conversation: ConversationID, count: Int) throws(StoreError) -> ClosedRange<Int64> {
        precondition(current == nil, "begin called while another conversation is loading")
        precondition(count > 0, "nothing to load")
        let found: Bool
        do throws(PostgresError) {
            try connection.execute(sql: "BEGIN ISOLATION LEVEL READ COMMITTED")
            let locked = try connection.query(
                "SELECT seq, version, newest_created_at FROM conversations WHERE id = $1 FOR UPDATE",
                [.text(conversation.rawValue)])
            found = locked.rowCount == 1
            if found {
                let first = try connection.query("SELECT nextval('message_ids')").int64(0, 0)
                let last = first + Int64(count) - 1
                if count > 1 {
                    try connection.query("SELECT setval('message_ids', $1::bigint)", [.int64(last)])
                }
                try connection.beginCopy(sql: Self.copySQL)
                current = Loading(conversation: conversation, seq: locked.int64(0, 0), firstID: first,
                                  count: Int64(count), versionBefore: locked.int64(0, 1),
                                  newestCreatedAt: locked.optionalInt64(0, 2) ?? 0)
            }
        } catch {
            rollBack()
            throw StoreError(postgres: error)
        }
        guard let loading = current else {
            rollBack()
            throw .conversationNotFound(conversation)
        }
        return loading.firstID...(loading.firstID + loading.count - 1)
    }

    /// Adds the next messages of the conversation begun (their ids follow
    /// on from the previous ones').
    package func add(_ messages: [NewMessage]) throws(StoreError) {
        guard var loading = current else { preconditionFailure("add called before begin") }
        precondition(loading.loaded + Int64(messages.count) <= loading.count, "more messages than begun with")
        do {
            for message in messages { try MessageRules.validate(message) }
        } catch {
            rollBack()
            throw error
        }
        loading.newestCreatedAt = max(loading.newestCreatedAt, Timestamp.now().millisecondsSinceEpoch)
        let createdAt = Timestamp(millisecondsSinceEpoch: loading.newestCreatedAt)
        for message in messages {
            let version = loading.versionBefore + loading.loaded + 1
            let id = loading.firstID + loading.loaded
            rows.append(loading.seq)
            rows.append(id)
            rows.appendBytes(message.sender)
            rows.appendBytes(message.body)
            rows.append(createdAt.millisecondsSinceEpoch)
            rows.append(message.replyTo)
            rows.appendBytes(message.clientID)
            rows.append(message.clientID.map { _ in ClientFingerprint.of(sender: message.sender, body: message.body) })
            rows.append(version)
            rows.append(version)
            rows.appendBytes(MessageJSONTail.encode(Message(appended: message, id: id, in: loading.conversation,
                                                            createdAt: createdAt, version: version)))
            rows.endRow()
            loading.loaded += 1
        }
        current = loading
        if rows.bytes.count >= Self.flushBytes { try flush() }
    }

    /// Ends the COPY, writes the conversation's counters, announces the
    /// change and commits.
    package func finish() throws(StoreError) {
        guard let loading = current else { preconditionFailure("finish called before begin") }
        precondition(loading.loaded == loading.count, "fewer messages than begun with")
        try flush()
        do throws(PostgresError) {
            try connection.endCopy()
            let after = loading.versionBefore + loading.count
            let lastID = loading.firstID + loading.count - 1
            // After the conversation's lock, as every writer takes them.
            let activity = try connection.query(
                "UPDATE activity_counter SET value = value + $1 WHERE id = 1 RETURNING value", [.int64(loading.count)]).int64(0, 0)
            try connection.query("""
                UPDATE conversations SET message_count = message_count + $1, oldest_id = coalesce(oldest_id, $2),
                                         newest_id = $3, version = $4, activity = $5, newest_created_at = $7
                WHERE seq = $6
                """, [.int64(loading.count), .int64(loading.firstID), .int64(lastID), .int64(after),
                      .int64(activity), .int64(loading.seq), .int64(loading.newestCreatedAt)])
            try connection.query(PostgresBulkChangeLog.consecutiveIDsSQL,
                                 [.int64(activity), .int64(loading.count), .int64(loading.seq), .int64(loading.firstID)])
            let notices: [ChangeNotice] = [
                .conversation(loading.conversation, version: after, changedIDs: [loading.firstID...lastID]),
                .inbox(activity: activity, conversations: [loading.seq], users: []),
            ]
            for payload in ChangeNotice.payloads(notices) {
                try connection.query(ChangeNotice.notifySQL, [.text(ChangeNotice.channel), .text(payload)])
            }
            try connection.execute(sql: "COMMIT")
            current = nil
        } catch {
            rollBack()
            throw StoreError(postgres: error)
        }
    }

    private func flush() throws(StoreError) {
        guard !rows.isEmpty else { return }
        do throws(PostgresError) {
            try connection.putCopyData(rows.bytes)
            rows.removeAll()
        } catch {
            rollBack()
            throw StoreError(postgres: error)
        }
    }

    /// Ends the COPY (if one runs) and the transaction after a failure.
    private func rollBack() {
        current = nil
        rows.removeAll()
        guard !connection.isBroken else { return }
        if connection.transactionStatus == .active { _ = try? connection.endCopy() }
        if connection.transactionStatus != .idle { _ = try? connection.execute(sql: "ROLLBACK") }
    }
}
