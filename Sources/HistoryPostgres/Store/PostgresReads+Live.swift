import HistoryStore

/// The reads of docs/API.md "Live": a jump by time, and the backend feed
/// from the change log (migrations/postgres/0004_change_log.sql), each one
/// statement, one snapshot, as every conversation read here.
extension PostgresReads {
    package enum LiveSQL {
        /// The `around` page of the first message by time at or after `$3`
        /// (one seek on `messages_by_time`; created times never decrease in
        /// id order, see PostgresBatch+CreationTime, so it is the smallest
        /// id there), `$4` on each side, in `around`'s shape
        /// (`SQL.withPageRows`: the conversation's row first, then the
        /// page's rows without it); the conversation's row ends with the
        /// anchor's id, `Int64.max` when there is none, which makes the
        /// page the newest `$4` messages. The anchor is a column of `c`,
        /// which PostgreSQL materialises (it is read twice), so it is
        /// sought once: inlined into the branches, its seek ran once per
        /// branch and once more per row read (51 seeks for a page of 50:
        /// 2.4x an `around` page at 1M depth). The anchor and the messages
        /// above it are one branch (`id >=`, `$4 + 1` rows). Measured
        /// against two other shapes, each a fifth to a quarter slower than
        /// `around` (docs/performance.md, "Jump by time in around's shape"):
        /// the conversation's columns on each of the 101 rows, and the
        /// anchor as a CTE of its own.
        package static let aroundTime = PostgresPageRows.Statement { shape in """
            \(PostgresReads.SQL.conversationCTE(adding: """
                ,
                       coalesce((SELECT m.id FROM messages AS m
                                 WHERE m.conversation_seq = conversations.seq AND m.created_at >= $3::bigint
                                 ORDER BY m.created_at, m.id LIMIT 1), 9223372036854775807) AS anchor
                """))
            SELECT \(PostgresReads.SQL.conversationColumns), \(shape.nullColumns), c.anchor FROM c
            UNION ALL
            SELECT \(PostgresRows.nullConversationColumns), \(shape.columns("m")), NULL::bigint FROM c
            CROSS JOIN LATERAL (
                (SELECT \(shape.fromTable) FROM messages
                 WHERE conversation_seq = c.seq AND id < c.anchor ORDER BY id DESC LIMIT $4::bigint)
                UNION ALL
                (SELECT \(shape.fromTable) FROM messages
                 WHERE conversation_seq = c.seq AND id >= c.anchor ORDER BY id LIMIT $4::bigint + 1)
            ) AS m
            """ }

        /// The counter (column 0), then up to `$2` changes after `$1`
        /// (1...7: activity, kind, conversation id, message id, user id,
        /// role, joined_at) with each message as it is now (8...16); one
        /// row of NULLs after the counter when there is none.
        package static let changes = """
            SELECT (SELECT value FROM activity_counter WHERE id = 1), l.activity, l.kind::bigint, c.id, l.message_id,
                   l.user_id, l.role, l.joined_at, \(PostgresRows.messageColumns("m"))
            FROM (SELECT 1) AS one
            LEFT JOIN LATERAL (
                SELECT * FROM change_log WHERE activity > $1::bigint ORDER BY activity LIMIT $2::bigint) AS l ON true
            LEFT JOIN conversations AS c ON c.seq = l.conversation_seq
            LEFT JOIN messages AS m ON m.conversation_seq = l.conversation_seq AND m.id = l.message_id
            ORDER BY l.activity
            """
    }

    /// The page of a jump to `time`.
    func around(_ time: Timestamp, in id: ConversationID, limit: Int, access: AccessCheck) throws(StoreError) -> Page {
        let (conversation, result, shape) = try pageRead(LiveSQL.aroundTime, id, access,
                                                         [.int64(time.millisecondsSinceEpoch), .int64(Int64(limit))])
        // The conversation's row holds the anchor (UNION ALL promises no order).
        guard let head = (0..<result.rowCount).first(where: { !result.isNull($0, 0) }) else {
            throw .conversationNotFound(id)
        }
        let anchorID = result.int64(head, SQL.columnCount + shape.columnCount)
        var page = around(anchorID, result, limit: limit, conversation: conversation)
        if anchorID == .max { page.anchor = Page.Anchor(id: nil, found: false, index: nil) }
        return page
    }

    package func serverChanges(_ query: ServerChangeQuery) throws(StoreError) -> ServerChangeFeed {
        let result = try run(LiveSQL.changes, [.int64(query.since), .int64(Int64(query.limit + 1))])
        guard result.rowCount >= 1, !result.isNull(0, 0) else {
            throw StoreError.storageFailure("the activity counter's row is missing")
        }
        let current = result.int64(0, 0)
        guard query.since <= current else { throw .versionAhead(requested: query.since, current: current) }
        var events: [ServerChangeEvent] = []
        events.reserveCapacity(result.rowCount)
        for row in 0..<result.rowCount where !result.isNull(row, 1) {
            let activity = result.int64(row, 1)
            guard let kind = ServerChangeEvent.Kind(stored: result.int64(row, 2)), !result.isNull(row, 3),
                  let conversation = ConversationID(result.string(row, 3)) else {
                throw .impossibleStoredValue("change_log row \(activity) holds an unknown kind or conversation")
            }
            let subject: ServerChangeEvent.Subject
            switch kind {
            case .created, .edited, .deleted:
                guard let message = PostgresRows.message(result, row: row, at: 8, in: conversation) else {
                    throw .impossibleStoredValue("change_log row \(activity) names no stored message")
                }
                subject = .message(message)
            case .memberAdded, .memberChanged:
                guard !result.isNull(row, 5), !result.isNull(row, 7),
                      let role = result.optionalString(row, 6).flatMap(MemberRole.init(rawValue:)) else {
                    throw .impossibleStoredValue("change_log row \(activity) lacks its member")
                }
                subject = .member(Member(userID: UserID(stored: result.string(row, 5)), role: role,
                                         joinedAt: Timestamp(millisecondsSinceEpoch: result.int64(row, 7))))
            case .memberRemoved:
                guard !result.isNull(row, 5) else { throw .impossibleStoredValue("change_log row \(activity) lacks its user") }
                subject = .removedMember(UserID(stored: result.string(row, 5)))
            }
            events.append(ServerChangeEvent(activity: activity, kind: kind, conversationID: conversation, subject: subject))
        }
        let hasMore = events.count > query.limit
        if hasMore { events.removeLast() }
        return ServerChangeFeed(events: events, hasMore: hasMore, activity: hasMore ? events[events.count - 1].activity : current)
    }
}
