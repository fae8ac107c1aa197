import HistoryStore

/// The newest and `before` pages of several requests, read by one
/// statement: each request's access check, its conversation's counters and
/// its rows, all in the statement's one snapshot, as `PostgresReads` reads
/// one page (`SQL.descending`), with the request's number in column 0. A
/// conversation read alone (its counters, which conditional requests and
/// kept newest pages read first) is a request for no rows.
///
/// Why: PostgreSQL starts its executor again for every execution of a
/// prepared statement, and that start, not the rows, is most of its CPU
/// for a page (docs/performance.md, "Stored JSON on PostgreSQL"). A
/// statement for several pages starts once, walks the primary key once per
/// page (a nested loop over the requests), and costs one round trip and
/// one wake-up of the session's process instead of one per page
/// (docs/performance.md, "Pages read together on PostgreSQL").
/// `ReadBatcher` gathers the requests.
package enum PostgresPageBatch {
    /// A descending page: up to `limit` messages below `below`, from the
    /// highest (`newest` asks below `Int64.max`).
    struct Request: Sendable {
        let conversation: ConversationID
        let access: AccessCheck
        let below: Int64
        let limit: Int

        /// The requests this statement reads: `newest` and `before`; nil for the others.
        init?(_ conversation: ConversationID, _ query: PageQuery, access: AccessCheck) {
            switch query.cursor {
            case .newest: below = .max
            case .before(let before): below = before
            default: return nil
            }
            self.conversation = conversation
            self.access = access
            limit = query.limit
        }

        /// The conversation alone, its access decided (a page of no rows):
        /// what a conditional request and a kept newest page read first.
        init(conversation: ConversationID, access: AccessCheck) {
            self.conversation = conversation
            self.access = access
            below = .max
            limit = 0
        }
    }

    /// The requests arrive as arrays (`r`, numbered from 1 in their order),
    /// then each reads its conversation and role as `conversationCTE` does
    /// and its rows as `SQL.descending` does; a request whose conversation
    /// does not exist has no row. Joins, not subqueries, for the reasons
    /// `conversationCTE` gives.
    package static let sql = """
        WITH r AS (
            SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[])
                WITH ORDINALITY AS r(conversation_id, user_id, below, lim, n)),
        c AS (
            SELECT r.n, r.below, r.lim, \(PostgresRows.conversationColumns("conversations")), caller.role AS caller_role
            FROM r
            JOIN conversations ON conversations.id = r.conversation_id
            LEFT JOIN members AS caller
                ON caller.conversation_seq = conversations.seq AND caller.user_id = r.user_id)
        SELECT c.n, \(PostgresReads.SQL.conversationColumns), \(PostgresPageRows.stored.nullColumns) FROM c
        UNION ALL
        SELECT c.n, \(PostgresRows.nullConversationColumns), \(PostgresPageRows.stored.columns("m")) FROM c
        CROSS JOIN LATERAL (
            SELECT \(PostgresPageRows.stored.fromTable) FROM messages
            WHERE conversation_seq = c.seq AND id < c.below ORDER BY id DESC LIMIT c.lim) AS m
        """

    /// Where the page statement's columns start in a row.
    static let conversationColumn = 1
    static let pageColumn = 1 + PostgresReads.SQL.columnCount

    /// One statement's rows, sorted out by request. Shared read-only by
    /// the threads whose requests it answers: libpq's results are
    /// immutable once made, and the indexes are set before it is shared.
    ///
    /// The use of `@unchecked Sendable` is safe for this type because
    /// every property is a constant and `PGResult` is only read.
    final class Rows: @unchecked Sendable {
        let result: PGResult
        /// Each request's conversation row, nil when the conversation does not exist.
        let heads: [Int?]
        /// Each request's page rows, in the result's order.
        let pageRows: [[Int]]

        init(_ result: PGResult, requests: Int) {
            var heads = [Int?](repeating: nil, count: requests)
            var pageRows = [[Int]](repeating: [], count: requests)
            for row in 0..<result.rowCount {
                let index = Int(result.int64(row, 0)) - 1
                guard heads.indices.contains(index) else { continue }
                if !result.isNull(row, conversationColumn) {
                    heads[index] = row
                } else {
                    pageRows[index].append(row)
                }
            }
            self.result = result
            self.heads = heads
            self.pageRows = pageRows
        }
    }

    /// Reads `requests` in one statement on `connection`.
    static func read(_ requests: [Request], on connection: PGConnection) throws(StoreError) -> Rows {
        let result = try PostgresReads(connection: connection).run(sql, [
            .text(PostgresArrayLiteral.texts(requests.map(\.conversation.rawValue))),
            .text(PostgresArrayLiteral.texts(requests.map { $0.access.user?.rawValue ?? "" })),
            .text(PostgresArrayLiteral.int64s(requests.map(\.below))),
            .text(PostgresArrayLiteral.int64s(requests.map { Int64($0.limit) })),
        ])
        return Rows(result, requests: requests.count)
    }

    /// Request `index`'s conversation once its access is decided, as
    /// `PostgresReads.conversation(_:access:)` answers it.
    static func conversation(_ index: Int, of rows: Rows, _ request: Request) throws(StoreError) -> Conversation {
        try PostgresReads.decide(request.access, rows.result, head: rows.heads[index], at: conversationColumn,
                                 id: request.conversation)
    }

    /// Request `index`'s page, its access decided first, exactly as
    /// `PostgresReads.page` answers it; nil when a row it read has no
    /// stored JSON (it is then read alone, in the whole shape:
    /// `PostgresReads.wholeDescendingPage`).
    static func page(_ index: Int, of rows: Rows, _ request: Request) throws(StoreError) -> Page? {
        let result = rows.result
        let conversation = try PostgresReads.decide(request.access, result, head: rows.heads[index],
                                                    at: conversationColumn, id: request.conversation)
        let pageRows = rows.pageRows[index]
        guard pageRows.allSatisfy({ !result.isNull($0, pageColumn + 1) }) else { return nil }
        var messages = MessageRows(conversationID: request.conversation)
        messages.reserveCapacity(pageRows.count)
        for row in PostgresRows.rowsOrdered(result, pageRows, by: pageColumn) {
            PostgresRows.appendPageRow(result, row: row, at: pageColumn, to: &messages)
        }
        return PostgresReads.descendingPage(messages, in: conversation, below: request.below)
    }
}
