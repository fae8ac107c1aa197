import HistoryStore

/// Runs of plain appends written with one statement: the common batch is
/// dozens of posts, and a round trip each would be most of its time.
///
/// A plain append (no `reply_to`, to a conversation that exists, and a
/// `client_id`, if any, that the batch's prefetch shows unused: see
/// `clientIDPrefetch`) cannot be refused, so its result is known but for
/// its id: its
/// version and `activity` value are taken in request order as usual, and
/// the row waits in `bufferedAppends`. The run is written (`flushAppends`)
/// before any other request of the batch runs, since that one may read
/// what the run wrote (an edit of a message just posted, a read marker
/// clamped to the newest id), and before the batch ends. Its ids are taken
/// from `message_ids` in the same statement, while every conversation is
/// locked, and given in ascending order to the run's rows in request
/// order: within a conversation a higher version gets a higher id, as one
/// by one.
extension PostgresBatch {
    struct BufferedAppend {
        let answerIndex: Int
        let seq: Int64
        let conversation: ConversationID
        let message: NewMessage
        let fingerprint: Int64?
        let version: Int64
        /// The time stored: the clock's, or the conversation's newest
        /// message's when that is later (`Counters.takeCreationTime`).
        let createdAt: Timestamp
        /// The stored JSON, built with `createdAt`.
        let tail: String?
        /// Its `activity` value's place (PostgresBatch+Activity).
        let activityPlace: Int64
        let completion: @Sendable (Result<AppendOutcome, StoreError>) -> Void
    }

    /// Takes the append into the run and answers nil (its answer comes
    /// with the run), answers at once when the append was refused before
    /// any write, or returns nil without taking it when it is not plain.
    func bufferAppend(_ new: NewMessage, to conversation: ConversationID, access: AccessCheck,
                      completion: @escaping @Sendable (Result<AppendOutcome, StoreError>) -> Void,
                      at answerIndex: Int) throws(PostgresError) -> (@Sendable () -> Void)?? {
        guard new.replyTo == nil, let seq = try seq(of: conversation), var changed = counters[seq] else { return nil }
        if let refusal = try refusal(access, seq: seq, in: conversation) {
            return .some { completion(.failure(refusal)) }
        }
        var fingerprint: Int64?
        if let clientID = new.clientID {
            // Known only for conversations prefetched and unchanged since;
            // a client_id this batch used already goes the one-by-one way.
            guard let stored = storedClientIDs[seq], appendedClientIDs[seq]?.contains(clientID) != true else { return nil }
            let posted = ClientFingerprint.of(sender: new.sender, body: new.body)
            if let earlier = stored[clientID] {
                // As `append`: a tombstone answers every retry the same.
                guard earlier.message.deleted || earlier.fingerprint == posted else {
                    return .some { completion(.failure(.clientIDConflict(clientID: clientID))) }
                }
                let message = earlier.message
                return .some { completion(.success(.existing(message))) }
            }
            fingerprint = posted
            appendedClientIDs[seq, default: []].insert(clientID)
        }
        if let error = changed.advanceVersion() ?? changed.checkRoomForAppend() {
            return .some { completion(.failure(error)) }
        }
        switch takeActivity() {
        case .success(let place): changed.activityPlace = place
        case .failure(let error): return .some { completion(.failure(error)) }
        }
        // Counted now, so the next append to the conversation counts this one.
        changed.appended += 1
        let createdAt = changed.takeCreationTime(clock: .now())
        touch(changed)
        // (The id is not in the stored JSON; the run's INSERT takes it.)
        let tail = MessageJSONTail.encode(Message(appended: new, id: 0, in: conversation, createdAt: createdAt,
                                                  version: changed.version))
        bufferedAppends.append(BufferedAppend(answerIndex: answerIndex, seq: seq, conversation: conversation, message: new,
                                              fingerprint: fingerprint, version: changed.version,
                                              createdAt: createdAt, tail: tail,
                                              activityPlace: changed.activityPlace ?? activityTaken,
                                              completion: completion))
        return .some(nil)
    }

    /// Writes the run and puts each append's answer at its place. The
    /// batch's last run (`last`), when no request locked the activity
    /// counter, also moves the counter by every value the batch took, in
    /// the same statement: the round trip `takeCounterAtEnd` would
    /// otherwise add (it finds out what went wrong if the counter had no
    /// room).
    func flushAppends(into answers: inout [(@Sendable () -> Void)?], last: Bool = false) throws(PostgresError) {
        guard !bufferedAppends.isEmpty else { return }
        let run = bufferedAppends
        bufferedAppends.removeAll()
        let movesCounter = last && activityBase == nil
        var parameters: [PostgresValue] = [
            .int64(Int64(run.count)),
            .text(PostgresArrayLiteral.int64s(run.map(\.seq))),
            .storedTexts(run.map(\.message.sender)),
            .storedTexts(run.map(\.message.body)),
            .text(PostgresArrayLiteral.int64s(run.map(\.createdAt.millisecondsSinceEpoch))),
            .text(PostgresArrayLiteral.int64s(run.map(\.version))),
            .storedTexts(run.map(\.message.clientID)),
            .text(PostgresArrayLiteral.int64s(run.map(\.fingerprint))),
            .storedTexts(run.map(\.tail)),
        ]
        if movesCounter { parameters.append(.int64(activityTaken)) }
        let result = try connection.execute(
            connection.cachedStatement(sql: movesCounter ? Self.appendRunMovingCounterSQL : Self.appendRunSQL), parameters)
        guard result.rowCount == run.count else {
            throw PostgresError(kind: .other, message: "a run of \(run.count) appends stored \(result.rowCount)")
        }
        if movesCounter, !result.isNull(0, 1) {
            try adopt(base: result.int64(0, 1) - activityTaken)
            counterMovedAtEnd = true
        }
        for (row, append) in run.enumerated() {
            let id = result.int64(row, 0)
            if var changed = counters[append.seq] {
                changed.firstAppendedID = changed.firstAppendedID ?? id
                changed.lastAppendedID = id
                counters[append.seq] = changed
            }
            changedIDs[append.seq, default: []].append(id)
            changeLog.append(.message(.created, id: id, seq: append.seq, activity: append.activityPlace))
            let message = Message(appended: append.message, id: id, in: append.conversation, createdAt: append.createdAt,
                                  version: append.version)
            let completion = append.completion
            answers[append.answerIndex] = { completion(.success(.created(message))) }
        }
    }

    /// `$1` how many, then arrays of seq, sender, body, created_at,
    /// version, client_id, fingerprint and stored JSON in request order;
    /// the ids given, in that order.
    static let appendRunSQL = appendRun(counter: "", select: """
        SELECT n.id FROM numbered AS n JOIN inserted AS i ON i.id = n.id ORDER BY n.ord
        """)

    /// `appendRunSQL`, and `$10`: how many values to move the activity
    /// counter by; each id with the counter's new value (NULL when it had
    /// no room or no row). The row is locked within the statement, after
    /// every conversation lock the batch took before.
    static let appendRunMovingCounterSQL = appendRun(counter: """
        ,
        counter AS (
            UPDATE activity_counter SET value = value + $10::bigint
            WHERE id = 1 AND value <= 9223372036854775807 - $10::bigint RETURNING value)
        """, select: """
        SELECT n.id, (SELECT value FROM counter) FROM numbered AS n JOIN inserted AS i ON i.id = n.id ORDER BY n.ord
        """)

    private static func appendRun(counter: String, select: String) -> String {
        """
        WITH taken AS MATERIALIZED (
            SELECT nextval('message_ids') AS id FROM generate_series(1, $1::bigint)),
        numbered AS MATERIALIZED (
            SELECT id, row_number() OVER (ORDER BY id) AS ord FROM taken),
        inserted AS (
            INSERT INTO messages (conversation_seq, id, sender, body, created_at, created_version, version,
                                  client_id, client_fingerprint, json_tail)
            SELECT u.seq, n.id, u.sender, u.body, u.created_at, u.version, u.version, u.client_id, u.fingerprint, u.tail
            FROM unnest($2::bigint[], $3::bytea[], $4::bytea[], $5::bigint[], $6::bigint[], $7::bytea[], $8::bigint[],
                        $9::bytea[])
                 WITH ORDINALITY AS u(seq, sender, body, created_at, version, client_id, fingerprint, tail, ord)
            JOIN numbered AS n ON n.ord = u.ord
            RETURNING id)\(counter)
        \(select)
        """
    }

    /// The statement that reads the stored messages that the batch's
    /// appends' `client_id`s name, or nil when none carries one. Sent in
    /// the pipeline that locks the conversations (`begin`), after the
    /// lock: the locks keep other instances from adding any until COMMIT,
    /// so with what this batch appends (`appendedClientIDs`) the answer to
    /// each of those appends is known without a lookup of its own. An edit
    /// or delete in the batch drops its conversation's entry (a
    /// tombstone's fingerprint is gone): later appends there look up.
    ///
    /// Keyed by seq when the writer knows every conversation's
    /// (`knownSeqs`: the common case, conversations written to before),
    /// else by public id with the seq a scalar subquery per row. The seq
    /// is never a join with `conversations`: with the join, the generic
    /// plan PostgreSQL keeps after five runs walked all of a
    /// conversation's messages (`messages_by_version`) and filtered on
    /// `client_id`, hundreds of buffers a batch growing with the
    /// conversation; with a seq, both columns of `messages_by_client_id`
    /// are the index condition. By seq the lookup reads about half the
    /// buffers (docs/performance.md, "The client_id lookup by seq").
    func clientIDPrefetch(of batch: [WriteRequest]) -> PGPipelineStatement? {
        var conversations: [String] = []
        var clientIDs: [String] = []
        for request in batch {
            guard case .append(let new, let conversation, _, _) = request, let clientID = new.clientID else { continue }
            conversations.append(conversation.rawValue)
            clientIDs.append(clientID)
        }
        guard !conversations.isEmpty else { return nil }
        var known: [Int64?] = []
        known.reserveCapacity(conversations.count)
        for conversation in conversations {
            guard let seq = knownSeqs.seq(of: conversation) else { break }
            known.append(seq)
        }
        if known.count == conversations.count {
            return PGPipelineStatement(Self.clientIDsBySeqSQL,
                                       [.text(PostgresArrayLiteral.int64s(known)), .storedTexts(clientIDs)])
        }
        return PGPipelineStatement(Self.clientIDsByIDSQL,
                                   [.text(PostgresArrayLiteral.texts(conversations)), .storedTexts(clientIDs)])
    }

    /// What both lookups read of each message found (`adoptClientIDs`).
    private static let clientIDColumns = """
        SELECT m.conversation_seq, m.id, m.sender, m.body, m.created_at, m.edited_at, m.deleted, m.reply_to,
               m.client_id, m.version, m.client_fingerprint
        """

    /// `$1` the conversations' seqs, `$2` the client_ids, pairwise: the
    /// stored messages they name.
    static let clientIDsBySeqSQL = """
        \(clientIDColumns)
        FROM unnest($1::bigint[], $2::bytea[]) AS k(seq, client_id)
        JOIN messages AS m ON m.conversation_seq = k.seq AND m.client_id = k.client_id
        """

    /// `clientIDsBySeqSQL` with `$1` the conversations' public ids.
    static let clientIDsByIDSQL = """
        \(clientIDColumns)
        FROM unnest($1::text[], $2::bytea[]) AS k(conversation_id, client_id)
        JOIN messages AS m
            ON m.conversation_seq = (SELECT c.seq FROM conversations AS c WHERE c.id = k.conversation_id)
           AND m.client_id = k.client_id
        """

    /// Records what `clientIDPrefetch` read, for the conversations the
    /// batch locked (`seqs`, known by then); one created since the lock
    /// statement is not known here, and its appends look up one by one.
    func adoptClientIDs(_ result: PGResult?, of batch: [WriteRequest]) {
        for request in batch {
            guard case .append(let new, let conversation, _, _) = request, new.clientID != nil,
                  let seq = seqs[conversation.rawValue] else { continue }
            storedClientIDs[seq] = storedClientIDs[seq] ?? [:]
        }
        guard let result else { return }
        for row in 0..<result.rowCount {
            let seq = result.int64(row, 0)
            guard let id = counters[seq]?.id, storedClientIDs[seq] != nil else { continue }
            let message = Self.message(result, row: row, in: id, from: 1)
            if let clientID = message.clientID {
                storedClientIDs[seq, default: [:]][clientID] = (message, result.optionalInt64(row, 10))
            }
        }
    }
}
