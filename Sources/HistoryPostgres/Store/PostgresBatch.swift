import HistoryStore

/// One group-committed batch as one PostgreSQL transaction: every request
/// of it answered with its own result, the guarantees kept while other
/// instances write the same tables (migrations/postgres/0001_init.sql,
/// "How writers keep the guarantees across instances").
///
/// The order of a batch:
/// 1. `BEGIN` at READ COMMITTED, then every conversation the batch names
///    locked in ascending `seq` with one `SELECT ... FOR UPDATE` (its
///    counters read as the last writer committed them), then the callers'
///    roles and the stored `client_id`s the batch needs: one pipeline,
///    one round trip (`begin`).
/// 2. Each request: its checks, then its writes. Message ids come from the
///    `message_ids` sequence while the conversation is locked, versions
///    from the locked rows' values, kept in memory; `activity` values as
///    places among the batch's takes (see PostgresBatch+Activity).
/// 3. The `activity_counter` row, after every conversation lock (the lock
///    order every writer follows, so no two wait on each other in a
///    cycle): moved by the batch's takes within its last run of appends,
///    or in a statement of its own when the batch does not end with one,
///    unless a request that writes its value at once (a member change, a
///    read marker, a created conversation) locked it earlier.
/// 4. The touched conversations' counters written back (one statement),
///    the counter's row if it was locked earlier, the notices
///    (`pg_notify`), `COMMIT`.
///
/// A failing request must not poison the batch, and PostgreSQL aborts the
/// whole transaction on any error, so a request never lets one happen: its
/// checks (unknown conversation, reply target, `client_id`, tombstone,
/// member) run before it writes, and the one race the locks do not settle,
/// two instances creating the same conversation id, is an `INSERT ... ON
/// CONFLICT DO NOTHING`. (A `client_id` cannot race: both instances lock
/// the conversation first, and the second reads the first's row once it
/// committed.) No savepoint is needed, and none is paid for.
///
/// The `activity_counter` row is the one every writer of every instance
/// passes through, so a batch of appends, edits and deletes takes it only
/// at its end, for its last statement and its COMMIT, rather than for the
/// whole batch: values are handed out from memory as places and become
/// real once the row is locked. Either way its values commit in the order
/// they were taken (the row is held from then until COMMIT), which is what
/// readers following "activity > last seen" rely on.
///
/// A database error is not a request's: it fails the batch. A deadlock or
/// serialization failure is rolled back and the batch may be written again
/// (`Outcome.mayRetry`), as may one whose session was found lost before it
/// wrote anything; a connection lost later, during `COMMIT` above all,
/// leaves the outcome unknown and is answered `.unavailable`, never
/// retried here.
///
/// Not `Sendable`: made, used and dropped on the writer's queue, with the
/// connection the pool lent it.
final class PostgresBatch {
    /// What a batch produced: the answers to give once it is durable.
    struct Outcome: Sendable {
        var answers: [@Sendable () -> Void] = []
        /// Set when the batch committed.
        var commit: PostgresCommit?
        /// Rolled back by a deadlock or serialization failure before
        /// anything was answered: writing it again is safe.
        var mayRetry = false

        static func failed(_ batch: [WriteRequest], with error: StoreError, mayRetry: Bool = false) -> Outcome {
            Outcome(answers: batch.map { request in { request.fail(error) } }, commit: nil, mayRetry: mayRetry)
        }
    }

    /// A locked conversation's counters while the batch is being written,
    /// written back with one statement just before COMMIT.
    struct Counters {
        let seq: Int64
        let id: ConversationID
        var version: Int64
        let storedVersion: Int64
        let storedMessageCount: Int64
        let storedNewestID: Int64?
        /// As read with the lock (or inserted by this batch); a change's
        /// new value is its place, `activityPlace`.
        let activity: Int64
        /// The batch's last take for this conversation, as a place
        /// (`PostgresBatch+Activity`): the activity written back.
        var activityPlace: Int64?
        var appended: Int64 = 0
        var firstAppendedID: Int64?
        var lastAppendedID: Int64?
        /// The newest message's `created_at` in milliseconds (0 for none):
        /// the floor of the next append's time (PostgresBatch+CreationTime),
        /// as read with the lock, then the batch's own last append's.
        var newestCreatedAt: Int64

        /// Only a tampered row can hold a conversation at `Int64.max`.
        mutating func advanceVersion() -> StoreError? {
            guard version < Int64.max else {
                return .impossibleStoredValue("conversation '\(id.rawValue)' is at version \(version), "
                    + "after which no change can be numbered")
            }
            version += 1
            return nil
        }

        func checkRoomForAppend() -> StoreError? {
            guard storedMessageCount <= Int64.max - appended - 1 else {
                return .impossibleStoredValue("conversation '\(id.rawValue)' counts \(storedMessageCount) messages, "
                    + "too many to count another")
            }
            return nil
        }
    }

    let connection: PGConnection
    /// Public id -> seq of every conversation locked or created by this
    /// transaction.
    var seqs: [String: Int64] = [:]
    /// Their counters, by seq.
    var counters: [Int64: Counters] = [:]
    /// The conversations a request changed (SQLite's `pending`): their
    /// counters are written back and they are in the inbox notice.
    var touched: Set<Int64> = []
    /// The messages each conversation's new version changed.
    var changedIDs: [Int64: [Int64]] = [:]
    /// Users whose marker or membership changed.
    var inboxUsers: Set<String> = []
    /// Plain appends waiting to be written with one statement (`flushAppends`).
    var bufferedAppends: [BufferedAppend] = []
    /// The stored messages the batch's `client_id`s name, read once under
    /// the locks (`clientIDPrefetch`), by seq then client_id; a seq is a
    /// key only while nothing in the batch changed a message of it.
    var storedClientIDs: [Int64: [String: (message: Message, fingerprint: Int64?)]] = [:]
    /// The roles of the batch's callers (`AccessCheck.user`) in the
    /// conversations they write in, read once under the locks
    /// (`rolePrefetch`) and kept up to date by the batch's own member
    /// changes: `.some(nil)` is known not to be a member.
    var callerRoles: [CallerKey: MemberRole?] = [:]
    /// The batch's changes for the change log, each with its `activity`
    /// value's place (PostgresBatch+ChangeLog): inserted by `finish`.
    var changeLog: [ChangeLogEntry] = []
    /// The `client_id`s this batch appended, by seq.
    var appendedClientIDs: [Int64: Set<String>] = [:]
    /// How many `activity` values the batch took: the places 1...this.
    var activityTaken: Int64 = 0
    /// The counter's value when the batch locked its row; nil until then.
    var activityBase: Int64?
    /// The row was locked by moving it at the end (nothing left to write).
    var counterMovedAtEnd = false
    /// Set when the locked counter had no room for the places taken: the
    /// batch is written again with `countersFirst`.
    var counterHasNoRoom = false
    /// Lock the counter's row with the conversations, at the start (the
    /// way back for a counter near its end).
    let countersFirst: Bool
    /// The writer's seqs of conversations seen by earlier batches; every
    /// conversation this batch locks or creates is added.
    let knownSeqs: KnownConversationSeqs

    init(connection: PGConnection, countersFirst: Bool = false, knownSeqs: KnownConversationSeqs = KnownConversationSeqs()) {
        self.connection = connection
        self.countersFirst = countersFirst
        self.knownSeqs = knownSeqs
    }

    static let conversationColumns = "seq, id, version, message_count, newest_id, activity, newest_created_at"

    // MARK: - The transaction

    func perform(_ batch: [WriteRequest]) -> Outcome {
        var outcome = Outcome()
        var begun = false
        do throws(PostgresError) {
            try begin(locking: batch)
            begun = true
            var answers: [(@Sendable () -> Void)?] = []
            for request in batch {
                if case .append(let new, let conversation, let access, let completion) = request,
                   let answer = try bufferAppend(new, to: conversation, access: access, completion: completion,
                                                 at: answers.count) {
                    answers.append(answer)
                    continue
                }
                // Whatever else the request is, it sees the appends before it.
                try flushAppends(into: &answers)
                answers.append(try answer(request))
            }
            try flushAppends(into: &answers, last: true)
            try takeCounterAtEnd()
            outcome.answers = answers.compactMap { $0 }
            let notices = self.notices()
            do throws(PostgresError) {
                try finish(notices: notices)
            } catch where error.kind == .connectionLost {
                return .failed(batch, with: .unavailable(reason: "the connection was lost while committing, "
                    + "so whether the batch was written is unknown (\(error.message))"))
            }
            outcome.commit = PostgresCommit(notices: notices, size: batch.count)
            return outcome
        } catch {
            rollBack()
            if counterHasNoRoom && !countersFirst {
                // Nothing was answered: the batch again, each take checked.
                return PostgresBatch(connection: connection, countersFirst: true, knownSeqs: knownSeqs).perform(batch)
            }
            // A session lost before it wrote anything (one the server ended
            // while it sat idle in the pool, after a restart) is replaced by
            // the pool: the batch is simply written on the next one.
            let retry = error.kind == .deadlockDetected || error.kind == .serializationFailure
                || (!begun && error.kind == .connectionLost)
            return .failed(batch, with: Self.storeError(error), mayRetry: retry)
        }
    }

    /// What the requests of a failed batch are answered. Beside the store's
    /// one mapping (`StoreError(postgres:)`): a deadlock or serialization
    /// failure still there after the writer's retries is contention, not a
    /// bug (503, try again); the `message_ids` sequence at its end (2200H)
    /// is the id space used up, as in SQLite (507).
    static func storeError(_ error: PostgresError) -> StoreError {
        switch error.kind {
        case .deadlockDetected, .serializationFailure:
            return .unavailable(reason: "the batch kept losing lock races with other writers: \(error.message)")
        case _ where error.sqlState == "2200H":
            return .idSpaceExhausted("no room for another message: the message_ids sequence is at its end")
        default:
            return StoreError(postgres: error)
        }
    }

    /// Ends a failed transaction; the pool drops a connection left inside one.
    private func rollBack() {
        guard !connection.isBroken, connection.transactionStatus != .idle else { return }
        _ = try? connection.execute(sql: "ROLLBACK")
    }

    /// Runs one request; its answer is given after COMMIT.
    private func answer(_ request: WriteRequest) throws(PostgresError) -> @Sendable () -> Void {
        switch request {
        case .createConversation(let id, let title, let owner, let completion):
            let result = try createConversation(id: id, title: title, owner: owner)
            return { completion(result) }
        case .append(let message, let conversation, let access, let completion):
            let result = try append(message, to: conversation, access: access)
            return { completion(result) }
        case .edit(let messageID, let conversation, let body, let access, let completion):
            let result = try edit(messageID: messageID, in: conversation, body: body, access: access)
            return { completion(result) }
        case .delete(let messageID, let conversation, let access, let completion):
            let result = try delete(messageID: messageID, in: conversation, access: access)
            return { completion(result) }
        case .putMember(let user, let role, let conversation, let access, let completion):
            let result = try putMember(user, role: role, in: conversation, access: access)
            return { completion(result) }
        case .removeMember(let user, let conversation, let access, let completion):
            let result = try removeMember(user, from: conversation, access: access)
            return { completion(result) }
        case .markRead(let user, let conversation, let messageID, let access, let completion):
            let result = try markRead(user, in: conversation, upTo: messageID, access: access)
            return { completion(result) }
        }
    }

    // MARK: - Locks

    /// `BEGIN`, the locks and the batch's prefetches in one round trip:
    /// one pipeline (PGConnection+Pipeline) of `BEGIN`, the lock of every
    /// existing conversation a request of the batch names, in ascending
    /// `seq`, with its counters as last committed (and with `countersFirst`
    /// then the `activity_counter` row), the callers' roles
    /// (`rolePrefetch`) and the stored messages the appends' `client_id`s
    /// name (`clientIDPrefetch`). The server runs them in that order, so
    /// the prefetches read under the locks; a failure in any skips the rest
    /// and fails the batch, before it wrote anything.
    ///
    /// The `countersFirst` lock is one statement that takes both in that
    /// order: the counter's scan is filtered by a scalar subquery over all
    /// the conversation rows, which the server evaluates (locking them)
    /// before it locks the counter's row it is filtering.
    private func begin(locking batch: [WriteRequest]) throws(PostgresError) {
        var ids = Set<String>()
        for request in batch {
            if let target = request.target { ids.insert(target.conversation.rawValue) }
        }
        let list = PostgresValue.text(PostgresArrayLiteral.texts(ids.sorted()))
        var statements = [PGPipelineStatement("BEGIN ISOLATION LEVEL READ COMMITTED", cached: false),
                          PGPipelineStatement(countersFirst ? Self.lockWithCounterSQL : Self.lockSQL, [list])]
        let roles = rolePrefetch(of: batch)
        let clientIDs = clientIDPrefetch(of: batch)
        statements += [roles, clientIDs].compactMap { $0 }
        let results = try connection.pipeline(statements)
        let locked = results[1]
        if countersFirst {
            guard locked.rowCount >= 1 else { throw Self.missingCounter }
            try adopt(base: locked.int64(0, 0))
            for row in 0..<locked.rowCount where !locked.isNull(row, 1) { remember(locked, row: row, from: 1) }
        } else {
            for row in 0..<locked.rowCount { remember(locked, row: row) }
        }
        adoptRoles(roles == nil ? nil : results[2], of: batch)
        adoptClientIDs(clientIDs == nil ? nil : results[results.count - 1], of: batch)
    }

    /// `$1` the conversations' ids: their rows locked in ascending `seq`.
    static let lockSQL = """
        SELECT \(conversationColumns) FROM conversations
        WHERE id = ANY($1::text[]) ORDER BY seq FOR UPDATE
        """

    /// `lockSQL`, then the counter's row: its value, then each locked row
    /// (`conversationColumns` from column 1; one row of NULLs for none).
    static let lockWithCounterSQL = """
        WITH locked AS MATERIALIZED (
            SELECT \(conversationColumns) FROM conversations
            WHERE id = ANY($1::text[]) ORDER BY seq FOR UPDATE),
        counter AS MATERIALIZED (
            SELECT value FROM activity_counter WHERE id = 1 AND (SELECT count(*) FROM locked) >= 0 FOR UPDATE)
        SELECT counter.value, locked.* FROM counter LEFT JOIN locked ON true ORDER BY locked.seq
        """

    /// The end of the batch in one round trip: one pipeline
    /// (PGConnection+Pipeline) of the touched conversations' counters, the
    /// counter's row when a request locked it before the end
    /// (`counterWriteBack`), the change log (PostgresBatch+ChangeLog), the
    /// notices (`pg_notify`, delivered by PostgreSQL at COMMIT, never after a
    /// rollback), `COMMIT`. Each statement is prepared once per session with
    /// its values as parameters: as one string of literals, the end was
    /// parsed and planned again at every batch, about 150 µs of
    /// PostgreSQL's CPU a batch (docs/performance.md, "Appends on
    /// PostgreSQL planned once").
    private func finish(notices: [ChangeNotice]) throws(PostgresError) {
        var statements: [PGPipelineStatement] = []
        if !touched.isEmpty {
            let rows = touched.sorted().compactMap { counters[$0] }
            func array(_ values: [Int64?]) -> PostgresValue { .text(PostgresArrayLiteral.int64s(values)) }
            statements.append(PGPipelineStatement(Self.countersWriteBackSQL, [
                array(rows.map(\.seq)), array(rows.map(\.appended)), array(rows.map(\.firstAppendedID)),
                array(rows.map(\.lastAppendedID)), array(rows.map(\.version)),
                array(rows.map { $0.activityPlace.map(storedActivity) ?? $0.activity }),
                array(rows.map { $0.appended > 0 ? $0.newestCreatedAt : nil }),
            ]))
        }
        if let value = counterWriteBack {
            statements.append(PGPipelineStatement("UPDATE activity_counter SET value = $1 WHERE id = 1", [.int64(value)]))
        }
        if let changes = changeLogInsert() { statements.append(changes) }
        for payload in ChangeNotice.payloads(notices) {
            statements.append(PGPipelineStatement(ChangeNotice.notifySQL, [.text(ChangeNotice.channel), .text(payload)]))
        }
        statements.append(PGPipelineStatement("COMMIT", cached: false))
        let results = try connection.pipeline(statements)
        // The pipeline throws its first failure. A COMMIT that meets a
        // transaction failed before it answers ROLLBACK, without an error.
        guard results.last?.commandTag == "COMMIT", connection.transactionStatus == .idle else {
            throw PostgresError(kind: .other, message: "the batch's transaction did not commit")
        }
    }

    /// `$1` to `$7`: the touched conversations' seqs, and for each how many
    /// messages the batch appended, the first and last appended ids (NULL
    /// for none), the new version, the new activity value and the last
    /// appended message's `created_at` (NULL for none).
    static let countersWriteBackSQL = """
        UPDATE conversations AS c
        SET message_count = c.message_count + u.appended, oldest_id = coalesce(c.oldest_id, u.first_id),
            newest_id = coalesce(u.last_id, c.newest_id), version = u.version, activity = u.activity,
            newest_created_at = coalesce(u.newest_created_at, c.newest_created_at)
        FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[], $7::bigint[])
             AS u(seq, appended, first_id, last_id, version, activity, newest_created_at)
        WHERE c.seq = u.seq
        """

    /// Records a locked conversation row (`conversationColumns` from column `first`).
    private func remember(_ result: PGResult, row: Int, from first: Int = 0) {
        guard let id = ConversationID(result.string(row, first + 1)) else { return }
        let seq = result.int64(row, first)
        let version = result.int64(row, first + 2)
        seqs[id.rawValue] = seq
        knownSeqs.remember(id.rawValue, seq: seq)
        counters[seq] = Counters(seq: seq, id: id, version: version, storedVersion: version,
                                 storedMessageCount: result.int64(row, first + 3),
                                 storedNewestID: result.optionalInt64(row, first + 4), activity: result.int64(row, first + 5),
                                 newestCreatedAt: result.optionalInt64(row, first + 6) ?? 0)
    }

    /// The conversation's seq, locked; nil when it does not exist. One the
    /// batch did not name up front (it was created by another instance
    /// since) is locked now, out of `seq` order: a deadlock that may cause
    /// is detected by the server and the batch written again.
    func seq(of id: ConversationID) throws(PostgresError) -> Int64? {
        if let seq = seqs[id.rawValue] { return seq }
        let result = try connection.execute(connection.cachedStatement(sql: """
            SELECT \(Self.conversationColumns) FROM conversations WHERE id = $1 FOR UPDATE
            """), [.text(id.rawValue)])
        guard result.rowCount == 1 else { return nil }
        remember(result, row: 0)
        return seqs[id.rawValue]
    }

    // MARK: - Counters

    /// Records a change to the conversation the batch made.
    func touch(_ changed: Counters) {
        counters[changed.seq] = changed
        touched.insert(changed.seq)
    }

    /// What the batch changed, as every instance's waits need it: each
    /// conversation whose version moved with the ids it changed, and the
    /// inbox notice (the batch's last activity, the conversations it
    /// changed, the users whose marker or membership changed), the same
    /// sets the SQLite store publishes to its waiters.
    func notices() -> [ChangeNotice] {
        var notices: [ChangeNotice] = []
        for seq in touched.sorted() {
            guard let changed = counters[seq], changed.version != changed.storedVersion else { continue }
            notices.append(.conversation(changed.id, version: changed.version,
                                         changedIDs: ChangedMessageIDs(changedIDs[seq] ?? []).ranges))
        }
        if !touched.isEmpty || !inboxUsers.isEmpty {
            notices.append(.inbox(activity: lastActivity, conversations: touched.sorted(), users: inboxUsers.sorted()))
        }
        return notices
    }
}
