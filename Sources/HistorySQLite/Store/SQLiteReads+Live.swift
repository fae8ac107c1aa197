import HistoryStore

/// The reads of docs/API.md "Live": the anchor of a jump by time, and the
/// backend feed from the change log (migrations/0006_change_log.sql).
extension SQLiteReads {
    enum LiveSQL {
        /// The conversation's first message at or after place `?1`, up to
        /// place `?2`, with its time: one seek on the table's rowid.
        static let firstFrom = """
            SELECT place, created_at FROM messages WHERE place >= ? AND place <= ? ORDER BY place LIMIT 1
            """

        /// The last time mark of conversation `?1` created before `?2`
        /// (migrations/0010_time_marks.sql): one seek on the marks' index.
        static let markBefore = """
            SELECT place, created_version FROM messages
            WHERE conversation_seq = ? AND created_at < ? AND created_version % 64 = 0
            ORDER BY created_at DESC, created_version DESC LIMIT 1
            """

        /// The first time mark of conversation `?1` created at or after `?2`.
        static let markFrom = """
            SELECT place, created_version FROM messages
            WHERE conversation_seq = ? AND created_at >= ? AND created_version % 64 = 0
            ORDER BY created_at, created_version LIMIT 1
            """

        /// The first message from place `?1` to place `?2` created at or
        /// after `?3`: the rows between two marks, read in place order.
        static let firstCreatedFrom = """
            SELECT place FROM messages WHERE place >= ? AND place <= ? AND created_at >= ? ORDER BY place LIMIT 1
            """

        /// Up to `?2` changes after activity `?1`, in order, with their
        /// conversation's public id: a range of the log's rowid.
        static let changes = """
            SELECT change_log.activity, change_log.kind, change_log.conversation_seq, conversations.id,
                   change_log.message_id, change_log.user_id, change_log.role, change_log.joined_at
            FROM change_log JOIN conversations ON conversations.seq = change_log.conversation_seq
            WHERE change_log.activity > ? ORDER BY change_log.activity LIMIT ?
            """
    }

    /// The id of the anchor of a jump to `time`: the smallest id created
    /// at or after it, between `oldestID` and `newestID`; nil when none was.
    ///
    /// Created times never decrease in id order (the writer's
    /// `creationTime`), so the messages created at or after `time` are the
    /// conversation's newest ones, and the time marks (one message in 64,
    /// indexed by time: migrations/0010_time_marks.sql) bound where the
    /// first of them lies: after the last mark created before `time`, at or
    /// before the first mark created at or after it. Two seeks on that
    /// small index, then the messages between the marks read in order until
    /// one is of `time` or later: about 64, as many as the versions between
    /// the marks at most. Where the marks lie further apart than
    /// `scannedVersionsAtMost` (versions spent on edits and deletes, not
    /// appends), a binary search over the places between them instead, one
    /// rowid seek a step. Not an index by time of every message: that cost
    /// every append a page written (docs/performance.md, "Appends without
    /// the index by time", and "Time marks" for this search's figures).
    func firstMessage(atOrAfter time: Timestamp, seq: Int64, oldestID: Int64?, newestID: Int64?,
                      version: Int64) throws(StoreError) -> Int64? {
        guard let oldestID, let newestID else { return nil }
        let target = time.millisecondsSinceEpoch
        return try sqlite { () throws(SQLiteError) -> Int64? in
            typealias Mark = (place: Int64, version: Int64)
            let before = try connection.cachedStatement(sql: LiveSQL.markBefore)
                .firstRow(seq, target) { Mark($0.int64(0), $0.int64(1)) }
            let from = try connection.cachedStatement(sql: LiveSQL.markFrom)
                .firstRow(seq, target) { Mark($0.int64(0), $0.int64(1)) }
            // The first message of `time` or later lies in low...high, or is
            // the mark `from` when none there is.
            let low = before.map { $0.place + 1 } ?? MessagePlace.of(seq: seq, id: oldestID)
            let high = from.map { $0.place - 1 } ?? MessagePlace.of(seq: seq, id: newestID)
            var found: Int64?
            if low <= high {
                let versions = (from?.version ?? version) - (before?.version ?? 0)
                if versions <= Self.scannedVersionsAtMost {
                    found = try connection.cachedStatement(sql: LiveSQL.firstCreatedFrom)
                        .firstRow(low, high, target) { $0.int64(0) }
                } else {
                    found = try firstPlace(atOrAfter: target, from: low, through: high)
                }
            }
            return (found ?? from?.place).map { $0 & MessagePlace.maximumID }
        }
    }

    /// The most versions between two time marks for which the messages
    /// between them are read in order rather than searched: each message
    /// takes a version, so at most this many rows.
    static let scannedVersionsAtMost: Int64 = 256

    /// The smallest place in `low...high` created at or after `target`, by
    /// a binary search, one rowid seek a step (about log2 of the places
    /// between: at most 37 seeks).
    private func firstPlace(atOrAfter target: Int64, from low: Int64, through high: Int64) throws(SQLiteError) -> Int64? {
        // Invariant: every place below `low` was created before `target`, and
        // `found` (when set) is the smallest place above `high` created at or after it.
        var low = low, high = high
        var found: Int64?
        let statement = try connection.cachedStatement(sql: LiveSQL.firstFrom)
        while low <= high {
            let middle = low + (high - low) / 2
            guard let (place, createdAt) = try statement.firstRow(middle, high, map: { ($0.int64(0), $0.int64(1)) }) else {
                high = middle - 1
                continue
            }
            if createdAt >= target {
                found = place
                high = middle - 1
            } else {
                low = place + 1
            }
        }
        return found
    }

    /// The backend feed, in this read's one transaction: the log's rows
    /// after `since`, each message as it is now (one point read by its
    /// place), and the counter's value.
    func serverChanges(_ query: ServerChangeQuery) throws(StoreError) -> ServerChangeFeed {
        let current = try currentActivity()
        guard query.since <= current else { throw .versionAhead(requested: query.since, current: current) }
        typealias Logged = (activity: Int64, kind: Int64, seq: Int64, conversation: String, messageID: Int64?,
                            user: String?, role: String?, joinedAt: Int64?)
        let logged: [Logged] = try sqlite { () throws(SQLiteError) in
            try connection.cachedStatement(sql: LiveSQL.changes).rows(query.since, query.limit + 1) { row in
                (row.int64(0), row.int64(1), row.int64(2), row.string(3), row.optionalInt64(4),
                 row.optionalString(5), row.optionalString(6), row.optionalInt64(7))
            }
        }
        var events: [ServerChangeEvent] = []
        events.reserveCapacity(logged.count)
        for entry in logged {
            guard let kind = ServerChangeEvent.Kind(stored: entry.kind), let conversation = ConversationID(entry.conversation) else {
                throw .impossibleStoredValue("change_log row \(entry.activity) holds kind \(entry.kind) or a bad conversation")
            }
            let subject: ServerChangeEvent.Subject
            switch kind {
            case .created, .edited, .deleted:
                let rows = try entry.messageID.map { id throws(StoreError) in try one(seq: entry.seq, id: id, conversation: conversation) }
                guard let rows, !rows.isEmpty else {
                    throw .impossibleStoredValue("change_log row \(entry.activity) names no stored message")
                }
                subject = .message(rows.message(at: 0))
            case .memberAdded, .memberChanged:
                guard let user = entry.user, let role = entry.role.flatMap(MemberRole.init(rawValue:)),
                      let joinedAt = entry.joinedAt else {
                    throw .impossibleStoredValue("change_log row \(entry.activity) lacks its member")
                }
                subject = .member(Member(userID: UserID(stored: user), role: role,
                                         joinedAt: Timestamp(millisecondsSinceEpoch: joinedAt)))
            case .memberRemoved:
                guard let user = entry.user else {
                    throw .impossibleStoredValue("change_log row \(entry.activity) lacks its user")
                }
                subject = .removedMember(UserID(stored: user))
            }
            events.append(ServerChangeEvent(activity: entry.activity, kind: kind, conversationID: conversation, subject: subject))
        }
        let hasMore = events.count > query.limit
        if hasMore { events.removeLast() }
        return ServerChangeFeed(events: events, hasMore: hasMore, activity: hasMore ? events[events.count - 1].activity : current)
    }
}
