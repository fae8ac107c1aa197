import HistoryStore

/// The reads of docs/API.md "Live": the anchor of a jump by time, and the
/// backend feed from the change log (migrations/0006_change_log.sql).
extension SQLiteReads {
    enum LiveSQL {
        /// One seek on `messages_by_time`: the first message by time at or
        /// after `?2`, ties to the smallest id (its rowid, `place`, ends
        /// each entry). Created times never decrease in id order (the
        /// writer's `creationTime`), so it is also the smallest id there.
        static let firstAtOrAfter = """
            SELECT place FROM messages INDEXED BY messages_by_time
            WHERE conversation_seq = ? AND created_at >= ? ORDER BY created_at, place LIMIT 1
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

    /// The id of the anchor of a jump to `time`; nil when no message was
    /// created at or after it.
    func firstMessage(atOrAfter time: Timestamp, seq: Int64) throws(StoreError) -> Int64? {
        try sqlite { () throws(SQLiteError) in
            try connection.cachedStatement(sql: LiveSQL.firstAtOrAfter)
                .firstRow(seq, time.millisecondsSinceEpoch) { $0.int64(0) & MessagePlace.maximumID }
        }
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
