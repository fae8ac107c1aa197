import HistoryStore

/// Every read of the PostgreSQL store, with the same functions, results,
/// flags and errors as `SQLiteReads` (PostgresReadsParityTests
/// compares them on one data set), on one connection the caller checked
/// out of the pool, normally with no transaction open.
///
/// Snapshots: each conversation read (a conversation, a message, a page of
/// any kind with its flags, the change feed, a page of members, a role) is
/// ONE statement: a CTE finds the conversation row by its public id and a
/// `LEFT JOIN LATERAL` reads the rows from it, so the counters the flags
/// come from (version, oldest_id, newest_id) and the rows are one snapshot,
/// in one round trip, with no transaction to open or close. The inbox reads
/// (a page, the user feed, `hasInboxChanges`) take several statements and
/// run inside a `REPEATABLE READ READ ONLY` transaction of their own
/// (`snapshot`: BEGIN and COMMIT are two more round trips), so a page and
/// the `activity` it reports are consistent. Called inside a transaction,
/// they run in it instead (the caller's isolation then decides).
///
/// Failures are `StoreError.storage` (a full disk keeps `isStorageFull`);
/// a read changes nothing, so after a failure on a connection that
/// `isBroken` the caller may run it again on another.
///
/// Keyset reads only: a page is one descent of the primary key
/// `(conversation_seq, id)` and a walk of at most `limit` rows (two walks
/// and a point read for `around`), whatever the depth; never OFFSET.
/// Statements are prepared once per connection (`cachedStatement`) and read
/// in binary format.
package struct PostgresReads: SnapshotReads {
    package let connection: PGConnection

    package init(connection: PGConnection) {
        self.connection = connection
    }

    /// The statements, named so a test can ask PostgreSQL for their plans.
    package enum SQL {
        /// The conversation named by `$1`, as the CTE `c` every
        /// conversation read starts from, with the role of the user `$2` in
        /// it (`caller_role`; NULL for a non-member, and for `''`, which an
        /// administrator's read passes): the access check and the rows come
        /// from one statement, one snapshot. A join, not a scalar subquery
        /// in the select list: PostgreSQL inlines the CTE, and a subquery
        /// there would be evaluated again for every message row joined to it.
        static let conversationCTE = conversationCTE(adding: "")

        /// `conversationCTE` with more columns of `c` after `caller_role`
        /// (`extra` starts with its comma), computed once per statement as
        /// `c` is (the jump's anchor: PostgresReads+Live).
        static func conversationCTE(adding extra: String) -> String {
            """
            WITH c AS (
                SELECT \(PostgresRows.conversationColumns("conversations")), caller.role AS caller_role\(extra)
                FROM conversations
                LEFT JOIN members AS caller
                    ON caller.conversation_seq = conversations.seq AND caller.user_id = $2::text
                WHERE conversations.id = $1::text)
            """
        }
        /// What every conversation read selects from `c` first: its
        /// columns, then `caller_role` (`columnCount` in all).
        static let conversationColumns = PostgresRows.conversationColumns("c") + ", c.caller_role"
        static let columnCount = PostgresRows.conversationColumnCount + 1
        /// Selects the conversation and `caller_role` (columns 0...7), then the message the
        /// lateral subquery `m` read (8...16), one row per message, or one
        /// row of NULL message columns when it read none.
        static func withMessages(_ lateral: String) -> String {
            """
            \(conversationCTE)
            SELECT \(conversationColumns), \(PostgresRows.messageColumns("m")) FROM c
            LEFT JOIN LATERAL (\(lateral)) AS m ON true
            """
        }

        /// A page in `shape`. The first row is the conversation and
        /// `caller_role` (0...7) with NULL page columns; each page row
        /// (8...) follows with NULL conversation columns. Why not
        /// `withMessages`' one row per message: that repeats the
        /// conversation's eight columns on each of a page's 50 rows, which
        /// PostgreSQL sends and libpq parses every time. `c` is referenced
        /// twice, so PostgreSQL materialises it: the conversation is still
        /// looked up once, and both branches read the statement's one
        /// snapshot.
        static func withPageRows(_ shape: PostgresPageRows, _ lateral: String) -> String {
            """
            \(conversationCTE)
            SELECT \(conversationColumns), \(shape.nullColumns) FROM c
            UNION ALL
            SELECT \(PostgresRows.nullConversationColumns), \(shape.columns("m")) FROM c
            CROSS JOIN LATERAL (\(lateral)) AS m
            """
        }

        static let conversation = "\(conversationCTE) SELECT \(conversationColumns) FROM c"

        static let message = withMessages("""
            SELECT \(PostgresRows.messageColumns("messages")) FROM messages
            WHERE conversation_seq = c.seq AND id = $3::bigint
            """)

        /// Up to `$4` messages below `$3`, from the highest (`newest` asks
        /// below `Int64.max`).
        package static let descending = PostgresPageRows.Statement { shape in withPageRows(shape, """
            SELECT \(shape.fromTable) FROM messages
            WHERE conversation_seq = c.seq AND id < $3::bigint ORDER BY id DESC LIMIT $4::bigint
            """) }

        /// Up to `$5` messages with `$3 < id < $4`, from the lowest.
        package static let ascending = PostgresPageRows.Statement { shape in withPageRows(shape, """
            SELECT \(shape.fromTable) FROM messages
            WHERE conversation_seq = c.seq AND id > $3::bigint AND id < $4::bigint ORDER BY id LIMIT $5::bigint
            """) }

        /// Up to `$4` messages below the anchor `$3`, the anchor, up to `$4`
        /// above it: two walks from one seek each and a point read.
        package static let around = PostgresPageRows.Statement { shape in withPageRows(shape, """
            (SELECT \(shape.fromTable) FROM messages
             WHERE conversation_seq = c.seq AND id < $3::bigint ORDER BY id DESC LIMIT $4::bigint)
            UNION ALL
            (SELECT \(shape.fromTable) FROM messages
             WHERE conversation_seq = c.seq AND id = $3::bigint)
            UNION ALL
            (SELECT \(shape.fromTable) FROM messages
             WHERE conversation_seq = c.seq AND id > $3::bigint ORDER BY id LIMIT $4::bigint)
            """) }

        /// `after $3` with a window `$5`: the column after the page row's
        /// counts the messages above `$3`, no further than `$5 + 1`
        /// (bounded however long the conversation); when it passes the
        /// window the newest `$4` are read instead, else the `$4` above
        /// `$3`. Each branch is guarded by a one-time filter on the count,
        /// so only one of them runs. The count walks the primary key in
        /// order (`ORDER BY`): unordered, PostgreSQL may build a bitmap of
        /// every message above `$3` first, which is the whole conversation
        /// for a client far behind.
        package static let afterWithinWindow = PostgresPageRows.Statement { shape in """
            \(conversationCTE)
            SELECT \(conversationColumns), \(shape.columns("m")), ahead.above FROM c
            CROSS JOIN LATERAL (
                SELECT count(*) AS above FROM (
                    SELECT 1 FROM messages WHERE conversation_seq = c.seq AND id > $3::bigint
                    ORDER BY id LIMIT $5::bigint + 1) AS counted
            ) AS ahead
            LEFT JOIN LATERAL (
                (SELECT \(shape.fromTable) FROM messages
                 WHERE conversation_seq = c.seq AND id > $3::bigint AND ahead.above <= $5::bigint
                 ORDER BY id LIMIT $4::bigint)
                UNION ALL
                (SELECT \(shape.fromTable) FROM messages
                 WHERE conversation_seq = c.seq AND ahead.above > $5::bigint
                 ORDER BY id DESC LIMIT $4::bigint)
            ) AS m ON true
            """ }

        /// The compacted change feed: messages changed after version `$3`
        /// with `$4 <= id <= $5`, in version order, `$6` of them; column 17
        /// is the version that created each. `id + 0` keeps the planner on
        /// `messages_by_version`: the id bounds only filter that ordered
        /// range scan, they must not pick the primary key (which would need
        /// a sort by version of every message in the id range).
        /// `$7`: count at most this many changes in the range (the reset
        /// threshold plus one; 0 counts nothing): one lateral over `c`'s
        /// single row, so it runs once, in the statement's snapshot. Each
        /// change took its own version, so when the version moved less
        /// than `$7` since, nothing is counted: fewer changes than that.
        package static let changes = """
            \(conversationCTE)
            SELECT \(conversationColumns), \(PostgresRows.messageColumns("m")), m.created_version, p.pending FROM c
            CROSS JOIN LATERAL (
                SELECT count(*) AS pending FROM (
                    SELECT 1 FROM messages
                    WHERE conversation_seq = c.seq AND version > $3::bigint AND id + 0 >= $4::bigint AND id + 0 <= $5::bigint
                    LIMIT CASE WHEN c.version - $3::bigint >= $7::bigint THEN $7::bigint ELSE 0 END
                ) AS counted
            ) AS p
            LEFT JOIN LATERAL (
                SELECT \(PostgresRows.messageColumns("messages")), messages.created_version FROM messages
                WHERE conversation_seq = c.seq AND version > $3::bigint AND id + 0 >= $4::bigint AND id + 0 <= $5::bigint
                ORDER BY version LIMIT $6::bigint
            ) AS m ON true
            """
    }

    // MARK: - Conversations and messages

    /// The conversation row and its internal key, or `.conversationNotFound`.
    package func conversation(_ id: ConversationID) throws(StoreError) -> (seq: Int64, conversation: Conversation) {
        let (_, result) = try conversationRead(SQL.conversation, id, .admin, [])
        return PostgresRows.conversation(result, row: 0, at: 0, id: id)
    }

    /// The conversation once `access` allows its caller.
    package func conversation(_ id: ConversationID, access: AccessCheck) throws(StoreError) -> Conversation {
        try conversationRead(SQL.conversation, id, access, []).0
    }

    package func message(_ messageID: Int64, in id: ConversationID, access: AccessCheck) throws(StoreError) -> Message {
        let (_, result) = try conversationRead(SQL.message, id, access, [.int64(messageID)])
        guard messageID >= 1 else { throw .messageNotFound(id, messageID: messageID) }
        guard let message = PostgresRows.message(result, row: 0, at: SQL.columnCount, in: id) else {
            throw .messageNotFound(id, messageID: messageID)
        }
        return message
    }

    // MARK: - Pages

    /// A page as docs/API.md "Pages" defines it; `query` was validated.
    package func page(of id: ConversationID, _ query: PageQuery, access: AccessCheck) throws(StoreError) -> Page {
        let limit = Int64(query.limit)
        switch query.cursor {
        case .newest:
            let (conversation, rows) = try messages(SQL.descending, id, access, [.int64(.max), .int64(limit)])
            return Self.descendingPage(rows, in: conversation, below: .max)

        case .before(let before):
            let (conversation, rows) = try messages(SQL.descending, id, access, [.int64(before), .int64(limit)])
            return Self.descendingPage(rows, in: conversation, below: before)

        case .after(let after):
            guard let window = query.window else {
                let (conversation, rows) = try messages(SQL.ascending, id, access, [.int64(after), .int64(.max), .int64(limit)])
                return Page(rows: rows, in: conversation,
                            emptyHasOlder: conversation.oldestID.map { $0 <= after } ?? false, emptyHasNewer: false)
            }
            let (conversation, result, shape) = try pageRead(SQL.afterWithinWindow, id, access,
                                                             [.int64(after), .int64(limit), .int64(Int64(window))])
            let rows = messageRows(result, in: id)
            let reset = result.int64(0, SQL.columnCount + shape.columnCount) > window
            var answer = Page(rows: rows, in: conversation,
                              emptyHasOlder: !reset && (conversation.oldestID.map { $0 <= after } ?? false),
                              emptyHasNewer: false)
            answer.reset = reset
            return answer

        case .between(let after, let before):
            // Within (after, before): nothing is older than the first message
            // above `after`; one extra row says whether more lie below `before`.
            let (conversation, found) = try messages(SQL.ascending, id, access, [.int64(after), .int64(before), .int64(limit + 1)])
            var rows = found
            let hasNewer = rows.count > query.limit
            if hasNewer { rows.removeLast() }
            return Page(rows: rows, hasOlder: false, hasNewer: hasNewer, version: conversation.version)

        case .around(let anchorID):
            let (conversation, result, _) = try pageRead(SQL.around, id, access, [.int64(anchorID), .int64(limit)])
            return around(anchorID, result, limit: query.limit, conversation: conversation)

        case .aroundTime(let time):
            return try around(time, in: id, limit: query.limit, access: access)
        }
    }

    /// A `newest` or `before` page read in the whole shape at once: for a
    /// page read together with others that met a row without stored JSON
    /// (reading the stored shape again would only meet it again).
    func wholeDescendingPage(of id: ConversationID, below: Int64, limit: Int,
                             access: AccessCheck) throws(StoreError) -> Page {
        let (conversation, result) = try conversationRead(SQL.descending.whole, id, access, [.int64(below), .int64(Int64(limit))])
        return Self.descendingPage(messageRows(result, in: id), in: conversation, below: below)
    }

    /// A `newest` (`below` is `Int64.max`) or `before` page of the rows read
    /// below `below`: nothing lies beyond an empty page's older side, and
    /// an empty `before` page has newer messages when the conversation's
    /// newest is at or above its cursor.
    static func descendingPage(_ rows: MessageRows, in conversation: Conversation, below: Int64) -> Page {
        Page(rows: rows, in: conversation, emptyHasOlder: false,
             emptyHasNewer: below != .max && (conversation.newestID.map { $0 >= below } ?? false))
    }

    /// `floor(limit/2)` older messages, the anchor when it exists, newer ones
    /// up to `limit`; when one side runs out, the other side fills the page.
    func around(_ anchorID: Int64, _ result: PGResult, limit: Int, conversation: Conversation) -> Page {
        let ordered = PostgresRows.rowsOrdered(result, by: SQL.columnCount)
        let id = { (row: Int) in result.int64(row, SQL.columnCount) }
        let older = ordered.filter { id($0) < anchorID }
        let anchor = ordered.filter { id($0) == anchorID }
        let newer = ordered.filter { id($0) > anchorID }
        let anchorCount = anchor.count
        let (olderTake, newerTake) = Page.aroundSplit(older: older.count, anchor: anchorCount, newer: newer.count, limit: limit)
        var rows = MessageRows(conversationID: conversation.id)
        rows.reserveCapacity(olderTake + anchorCount + newerTake)
        for row in older.suffix(olderTake) + anchor + newer.prefix(newerTake) {
            PostgresRows.appendPageRow(result, row: row, at: SQL.columnCount, to: &rows)
        }
        var page = Page(rows: rows, in: conversation, emptyHasOlder: false, emptyHasNewer: false)
        page.anchor = Page.Anchor(id: anchorID, found: anchorCount == 1, index: anchorCount == 1 ? olderTake : nil)
        return page
    }


    // MARK: - Changes

    /// The compacted change feed, as docs/API.md "Events" defines it; `query` was validated.
    package func changes(in id: ConversationID, _ query: ChangeQuery, access: AccessCheck) throws(StoreError) -> ChangeFeed {
        let since = query.since
        let (conversation, result) = try conversationRead(SQL.changes, id, access, [
            .int64(since), .int64(query.minID ?? 1), .int64(query.maxID ?? .max), .int64(Int64(query.limit + 1)),
            .int64(query.resetAfter.map { Int64($0) + 1 } ?? 0),
        ])
        guard since <= conversation.version else {
            throw .versionAhead(requested: since, current: conversation.version)
        }
        let messageColumn = SQL.columnCount
        let createdColumn = messageColumn + PostgresRows.messageColumnCount
        if let resetAfter = query.resetAfter, result.int64(0, createdColumn + 1) > Int64(resetAfter) {
            return .reset(at: conversation.version)
        }
        var events: [ChangeEvent] = []
        events.reserveCapacity(result.rowCount)
        for row in PostgresRows.rowsOrdered(result, by: messageColumn + 8) {
            guard let message = PostgresRows.message(result, row: row, at: messageColumn, in: id) else { continue }
            let kind: ChangeEvent.Kind = result.int64(row, createdColumn) > since ? .created : message.deleted ? .deleted : .edited
            events.append(ChangeEvent(kind: kind, message: message))
        }
        let hasMore = events.count > query.limit
        if hasMore { events.removeLast() }
        let version = hasMore ? events[events.count - 1].version : conversation.version
        return ChangeFeed(events: events, hasMore: hasMore, version: version)
    }

    // MARK: - Running statements

    /// Runs a cached statement (prepared on this connection at its first use).
    func run(_ sql: String, _ parameters: [PostgresValue]) throws(StoreError) -> PGResult {
        try pgRead { () throws(PostgresError) in
            try connection.execute(connection.cachedStatement(sql: sql), parameters)
        }
    }

    /// Runs a statement of `SQL.withMessages`' shape (the conversation `$1`
    /// and the caller `$2` first, then `parameters`): `.conversationNotFound`
    /// when it returned no row, and `access` decided on the `caller_role`
    /// the same statement read, before anything else is looked at.
    func conversationRead(_ sql: String, _ id: ConversationID, _ access: AccessCheck,
                          _ parameters: [PostgresValue]) throws(StoreError) -> (Conversation, PGResult) {
        let result = try run(sql, [.text(id.rawValue), .text(access.user?.rawValue ?? "")] + parameters)
        // The first row holds the conversation: in every shape, since a
        // `withPageRows` statement's first branch is it. Looked for, not
        // assumed, as UNION ALL promises no order.
        let head = (0..<result.rowCount).first(where: { !result.isNull($0, 0) })
        return (try Self.decide(access, result, head: head, at: 0, id: id), result)
    }

    /// The conversation in row `head` (its columns and then `caller_role`
    /// from `column` on) once `access` allows the caller the role read
    /// beside it; `.conversationNotFound` when there is no such row.
    static func decide(_ access: AccessCheck, _ result: PGResult, head: Int?, at column: Int,
                       id: ConversationID) throws(StoreError) -> Conversation {
        guard let head else { throw .conversationNotFound(id) }
        if access.user != nil {
            let role = result.optionalString(head, column + PostgresRows.conversationColumnCount)
                .flatMap(MemberRole.init(rawValue:))
            if let failure = access.failure(role: role, in: id) { throw failure }
        }
        return PostgresRows.conversation(result, row: head, at: column, id: id).conversation
    }

    /// Runs a page statement in the `.stored` shape, and again `.whole`
    /// when a row it read has no stored JSON (PostgresPageRows): the page
    /// comes from one statement, one snapshot, either way.
    func pageRead(_ statement: PostgresPageRows.Statement, _ id: ConversationID, _ access: AccessCheck,
                  _ parameters: [PostgresValue]) throws(StoreError) -> (Conversation, PGResult, PostgresPageRows) {
        let (conversation, result) = try conversationRead(statement.stored, id, access, parameters)
        let idColumn = SQL.columnCount
        let complete = (0..<result.rowCount).allSatisfy { result.isNull($0, idColumn) || !result.isNull($0, idColumn + 1) }
        guard !complete else { return (conversation, result, .stored) }
        let (again, whole) = try conversationRead(statement.whole, id, access, parameters)
        return (again, whole, .whole)
    }

    /// The conversation and the messages a page statement read, ascending.
    private func messages(_ statement: PostgresPageRows.Statement, _ id: ConversationID, _ access: AccessCheck,
                          _ parameters: [PostgresValue]) throws(StoreError) -> (Conversation, MessageRows) {
        let (conversation, result, _) = try pageRead(statement, id, access, parameters)
        return (conversation, messageRows(result, in: id))
    }

    private func messageRows(_ result: PGResult, in id: ConversationID) -> MessageRows {
        let ordered = PostgresRows.rowsOrdered(result, by: SQL.columnCount)
        var rows = MessageRows(conversationID: id)
        rows.reserveCapacity(ordered.count)
        for row in ordered {
            PostgresRows.appendPageRow(result, row: row, at: SQL.columnCount, to: &rows)
        }
        return rows
    }
}
