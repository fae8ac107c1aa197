import HistoryStore
import CSQLite
import Dispatch

/// Group commit on the writer: a batch of requests in one transaction, each
/// answered with its own result, one fsync for all.
///
/// A request makes at most one change to the file (one INSERT or UPDATE,
/// atomic by itself in SQLite), so a failed one leaves nothing behind
/// without a savepoint. (A per-request SAVEPOINT was measured and dropped:
/// SAVEPOINT/RELEASE and the sub-journal copies of every touched 8 KiB page
/// cost about as much as the INSERT itself.) The rare request that must write
/// two rows, a conversation created with its owner, uses `asOneUnit`.
extension SQLiteWriter {
    /// What a batch produced: the answers to give once it is durable, and
    /// each touched conversation's new version.
    struct BatchOutcome: Sendable {
        var answers: [@Sendable () -> Void] = []
        var versions: [ConversationID: Int64] = [:]
        /// The messages each conversation's new version changed, so a wait
        /// filtered to other ids can stay parked.
        var changedIDs: [ConversationID: [Int64]] = [:]
        /// The conversations (seqs) the batch changed, the users whose
        /// marker or membership it changed, and its last `activity` value:
        /// what wakes the inbox waits.
        var inboxConversations: Set<Int64> = []
        var inboxUsers: Set<String> = []
        var activity: Int64 = 0
        var committed = false

        /// What the batch tells the parked waits once readers see it.
        var committedChanges: [CommittedChange] {
            var changes: [CommittedChange] = versions.map { conversation, version in
                .version(conversation, version, changed: ChangedMessageIDs(changedIDs[conversation] ?? []))
            }
            if committed, !inboxConversations.isEmpty || !inboxUsers.isEmpty {
                changes.append(.activity(activity, conversations: inboxConversations, users: inboxUsers))
            }
            return changes
        }
    }

    /// A touched conversation's counters while its batch is being written:
    /// kept here and written back with one UPDATE per conversation just
    /// before COMMIT, instead of one UPDATE per message.
    struct PendingCounters {
        let id: ConversationID
        var version: Int64
        /// `version` as stored before this batch.
        let storedVersion: Int64
        /// `message_count` as stored before this batch.
        let storedMessageCount: Int64
        /// `newest_id` as stored before this batch.
        let storedNewestID: Int64?
        /// The conversation's last change on the `activity` counter.
        var activity: Int64
        var appended: Int64 = 0
        var firstAppendedID: Int64?
        var lastAppendedID: Int64?

        /// Moves to the next version. Only a tampered file can hold a
        /// conversation at `Int64.max`, which `+ 1` would trap on.
        mutating func advanceVersion() throws(StoreError) {
            guard version < Int64.max else {
                throw .impossibleStoredValue("conversation '\(id.rawValue)' is at version \(version), "
                    + "after which no change can be numbered")
            }
            version += 1
        }

        /// Throws unless `message_count` can count one more message (SQLite
        /// would turn an overflowing sum into a REAL).
        func checkRoomForAppend() throws(StoreError) {
            guard storedMessageCount <= Int64.max - appended - 1 else {
                throw .impossibleStoredValue("conversation '\(id.rawValue)' counts \(storedMessageCount) messages, "
                    + "too many to count another")
            }
        }
    }

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
        batchInboxUsers.removeAll(keepingCapacity: true)
        batchChanges.removeAll(keepingCapacity: true)
        batchMembershipSeqs.removeAll(keepingCapacity: true)
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
            case .append(let message, let conversation, let access, let completion):
                let result = Result { () throws(StoreError) in try append(message, to: conversation, access: access) }
                outcome.answers.append { completion(result) }
                if case .success(.created(let created)) = result { outcome.changedIDs[conversation, default: []].append(created.id) }
                failure = result.failure
            case .edit(let messageID, let conversation, let body, let access, let completion):
                let result = Result { () throws(StoreError) in
                    try edit(messageID: messageID, in: conversation, body: body, access: access)
                }
                outcome.answers.append { completion(result) }
                if case .success = result { outcome.changedIDs[conversation, default: []].append(messageID) }
                failure = result.failure
            case .delete(let messageID, let conversation, let access, let completion):
                let result = Result { () throws(StoreError) in try delete(messageID: messageID, in: conversation, access: access) }
                outcome.answers.append { completion(result) }
                if case .success = result { outcome.changedIDs[conversation, default: []].append(messageID) }
                failure = result.failure
            case .putMember(let user, let role, let conversation, let access, let completion):
                let result = Result { () throws(StoreError) in try putMember(user, role: role, in: conversation, access: access) }
                outcome.answers.append { completion(result) }
                failure = result.failure
            case .removeMember(let user, let conversation, let access, let completion):
                let result = Result { () throws(StoreError) in try removeMember(user, from: conversation, access: access) }
                outcome.answers.append { completion(result) }
                failure = result.failure
            case .markRead(let user, let conversation, let messageID, let access, let completion):
                let result = Result { () throws(StoreError) in
                    try markRead(user, in: conversation, upTo: messageID, access: access)
                }
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
            try writeBackActivity()
            try writeChangeLog()
            try connection.cachedStatement(sql: "COMMIT").execute()
        } catch {
            connection.rollback()
            return failed(batch, with: StoreError(error))
        }
        // Before any caller is answered: a role kept from before the
        // change is dropped (a conversation created in this batch has
        // none kept, and no pending counters).
        if !batchMembershipSeqs.isEmpty {
            keptVersions.committed(membershipsOf: batchMembershipSeqs.compactMap { pending[$0]?.id })
            batchMembershipSeqs.removeAll(keepingCapacity: true)
        }
        for (seq, counters) in pending {
            // A member change moves the conversation's activity, not its
            // version: only a new version wakes the message feed's waits.
            if counters.version != counters.storedVersion { outcome.versions[counters.id] = counters.version }
            outcome.inboxConversations.insert(seq)
        }
        outcome.inboxUsers = batchInboxUsers
        outcome.activity = activity
        storedActivity = activity
        pending.removeAll(keepingCapacity: true)
        batchInboxUsers.removeAll(keepingCapacity: true)
        committedSeqs.merge(batchSeqs) { _, new in new }
        batchSeqs.removeAll()
        outcome.committed = true
        return outcome
    }

    private func writeBackCounters() throws(SQLiteError) {
        let update = try connection.cachedStatement(sql: """
            UPDATE conversations SET message_count = message_count + ?, oldest_id = coalesce(oldest_id, ?),
                                     newest_id = coalesce(?, newest_id), version = ?, activity = ?
            WHERE seq = ?
            """)
        for (seq, counters) in pending {
            try update.execute(counters.appended, counters.firstAppendedID, counters.lastAppendedID, counters.version,
                               counters.activity, seq)
        }
        keptVersions.willCommit(pending.values.lazy.filter { $0.version != $0.storedVersion }.map { ($0.id, $0.version) })
    }

    private func failed(_ batch: [WriteRequest], with error: StoreError) -> BatchOutcome {
        connection.rollback()
        keptVersions.forgetAll()
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
        batchInboxUsers.removeAll()
        batchChanges.removeAll()
        batchMembershipSeqs.removeAll()
        // Values taken by the failed batch are skipped, never reused.
        if let stored = try? Self.loadActivity(connection) {
            activity = max(activity, stored)
            storedActivity = stored
        }
        if let stored = try? Self.loadNextMessageID(connection) {
            nextMessageID = max(nextMessageID, stored)
        }
    }

    /// The batch's counters of the conversation, read at its first touch.
    func counters(seq: Int64, id: ConversationID) throws(StoreError) -> PendingCounters {
        if let counters = pending[seq] { return counters }
        let stored = try sqlite { () throws(SQLiteError) in
            try connection.cachedStatement(sql: """
                SELECT version, message_count, newest_id, activity FROM conversations WHERE seq = ?
                """).firstRow(seq) { row in
                (version: row.int64(0), messageCount: row.int64(1), newestID: row.optionalInt64(2), activity: row.int64(3))
            }
        }
        guard let stored else { throw .storage(sqlite: SQLITE_ERROR, message: "conversation row \(seq) vanished") }
        return PendingCounters(id: id, version: stored.version, storedVersion: stored.version,
                               storedMessageCount: stored.messageCount, storedNewestID: stored.newestID,
                               activity: stored.activity)
    }

    /// Runs `body`, a request that writes more than one row, as one unit
    /// inside the batch transaction: when it fails, what it wrote is undone
    /// and the batch's other requests still commit. A savepoint costs about
    /// as much as the INSERT it guards, so only such rare requests use one.
    /// When the savepoint itself cannot be released or rolled back, the whole
    /// transaction is ended and a `.storage` error thrown, which makes
    /// `perform` fail the batch rather than commit half a request.
    func asOneUnit<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        try sqlite { () throws(SQLiteError) in try connection.cachedStatement(sql: "SAVEPOINT request").execute() }
        let value: T
        do {
            value = try body()
        } catch {
            do throws(SQLiteError) {
                try connection.cachedStatement(sql: "ROLLBACK TO request").execute()
                try connection.cachedStatement(sql: "RELEASE request").execute()
            } catch let undoError {
                connection.rollback()
                throw StoreError(undoError)
            }
            throw error
        }
        do throws(SQLiteError) {
            try connection.cachedStatement(sql: "RELEASE request").execute()
        } catch {
            connection.rollback()
            throw StoreError(error)
        }
        return value
    }
}
