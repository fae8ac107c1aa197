import HistoryStore
/// Every read of the store, on one reader connection inside one read
/// transaction, so the conversation row (version, oldest_id, newest_id) and
/// the messages come from the same snapshot and the page flags are exact.
///
/// Keyset reads only: each page is a seek on `place` (the rowid of
/// `messages`, see `MessagePlace`) plus a scan of at most `limit` rows,
/// whatever the depth; never OFFSET.
struct SQLiteReads: SnapshotReads {
    let connection: SQLiteConnection
    let seqCache: ConversationSeqCache
    let roleCache: SQLiteMemberRoleCache
    let largeInboxes: LargeInboxes

    // MARK: - Conversations and messages

    /// The conversation reads, named so a test can ask SQLite for their
    /// plans. Static: built once, not interpolated again on every request.
    enum ConversationSQL {
        static let bySeq = "SELECT \(StoredRows.conversationColumns) FROM conversations WHERE seq = ?1"
        static let byID = "SELECT \(StoredRows.conversationColumns) FROM conversations WHERE id = ?1"
        /// The row and the caller's role (column 8, NULL for a non-member)
        /// in one statement, for a reader that does not know the seq yet
        /// (once it does, `withMembersVersionBySeq` and its role cache take
        /// over). The role is a point lookup on the members' primary key
        /// (`NOT INDEXED`, as in `MemberSQL.roleBySeq`).
        static let withRoleByID = "SELECT \(StoredRows.conversationColumns), \(role) FROM conversations WHERE id = ?1"
        /// The row and its `members_version` (column 8), for a role the
        /// reader may have cached under that version.
        static let withMembersVersionBySeq =
            "SELECT \(StoredRows.conversationColumns), members_version FROM conversations WHERE seq = ?1"
        private static let role =
            "(SELECT role FROM members NOT INDEXED WHERE conversation_seq = conversations.seq AND user_id = ?2)"
    }

    /// A page's rows, `lower < place < upper`: one seek on the rowid B-tree
    /// and a scan of at most `limit` rows either way, each row's place and
    /// stored JSON only (`StoredRows.pageColumns`). Built once, like the
    /// conversation reads.
    enum PageSQL {
        static let descending =
            "SELECT \(StoredRows.pageColumns) FROM messages WHERE place > ? AND place < ? ORDER BY place DESC LIMIT ?"
        static let ascending =
            "SELECT \(StoredRows.pageColumns) FROM messages WHERE place > ? AND place < ? ORDER BY place ASC LIMIT ?"
        /// One row whole, for a row of a page that has no stored JSON.
        static let whole = "SELECT \(StoredRows.messageColumns) FROM messages WHERE place = ?"
    }

    /// The conversation row and its internal key, or `.conversationNotFound`.
    func conversation(_ id: ConversationID) throws(StoreError) -> (seq: Int64, conversation: Conversation) {
        try lookUp(id, withRoleOf: nil).found
    }

    /// The conversation once `access` allows its caller, the role read in
    /// this same transaction, by the same statement.
    func authorized(_ id: ConversationID, _ access: AccessCheck) throws(StoreError) -> (seq: Int64, conversation: Conversation) {
        try authorizedWithRole(id, access).found
    }

    /// `authorized`, with the role the decision was made on (nil for an administrator).
    private func authorizedWithRole(_ id: ConversationID, _ access: AccessCheck) throws(StoreError)
        -> (found: (seq: Int64, conversation: Conversation), role: MemberRole?) {
        guard let user = access.user else { return (try conversation(id), nil) }
        let (found, role) = try lookUp(id, withRoleOf: user)
        if let failure = access.failure(role: role, in: id) { throw failure }
        return (found, role)
    }

    /// The conversation row by its seq when this reader knows it (the
    /// integer key), else by its id; with `user`'s role when one is given
    /// (through the role cache once the seq is known).
    private func lookUp(_ id: ConversationID, withRoleOf user: UserID?) throws(StoreError)
        -> (found: (seq: Int64, conversation: Conversation), role: MemberRole?) {
        let known = seqCache.seq(of: id)
        if let known, let user {
            return try lookUpCachingRole(id, seq: known, of: user)
        }
        let row = try sqlite { () throws(SQLiteError) in
            let statement = try connection.cachedStatement(
                sql: known != nil ? ConversationSQL.bySeq : user == nil ? ConversationSQL.byID : ConversationSQL.withRoleByID)
            let key: any SQLiteBindable = known ?? id.rawValue
            let map = { (row: SQLiteRow) -> (found: (seq: Int64, conversation: Conversation), role: MemberRole?)? in
                guard let found = StoredRows.conversation(row) else { return nil }
                return (found, user == nil ? nil : row.optionalString(8).flatMap(MemberRole.init(rawValue:)))
            }
            if let user { return try statement.firstRow(key, user.rawValue, map: map) }
            return try statement.firstRow(key, map: map)
        }
        guard let row = row ?? nil else { throw .conversationNotFound(id) }
        _ = try MessagePlace.checkedSeq(row.found.seq, of: id)
        // Only a new mapping is written: most requests find it known.
        if known == nil { seqCache.remember(id, seq: row.found.seq) }
        return row
    }

    /// `lookUp` for a known seq and a user: the row with its
    /// `members_version`, and the role from this reader's cache when it was
    /// read under that version, else from the members' index (same
    /// transaction, so the same snapshot) and remembered.
    private func lookUpCachingRole(_ id: ConversationID, seq: Int64, of user: UserID) throws(StoreError)
        -> (found: (seq: Int64, conversation: Conversation), role: MemberRole?) {
        let row = try sqlite { () throws(SQLiteError) in
            try connection.cachedStatement(sql: ConversationSQL.withMembersVersionBySeq).firstRow(seq) {
                (row: SQLiteRow) -> (found: (seq: Int64, conversation: Conversation), version: Int64)? in
                guard let found = StoredRows.conversation(row) else { return nil }
                return (found, row.int64(8))
            }
        }
        guard let row = row ?? nil else { throw .conversationNotFound(id) }
        if let cached = roleCache.role(of: user, seq: seq, version: row.version) {
            return (row.found, cached)
        }
        let role = try sqlite { () throws(SQLiteError) in
            try connection.cachedStatement(sql: MemberSQL.roleBySeq)
                .firstRow(seq, user.rawValue) { MemberRole(rawValue: $0.string(0)) } ?? nil
        }
        roleCache.remember(role, of: user, seq: seq, version: row.version)
        return (row.found, role)
    }

    func conversation(_ id: ConversationID, access: AccessCheck) throws(StoreError) -> Conversation {
        try authorized(id, access).conversation
    }

    /// The role from the same lookup as the access check (the role cache's).
    func conversationWithRole(_ id: ConversationID, access: AccessCheck) throws(StoreError)
        -> (conversation: Conversation, role: MemberRole?) {
        let (found, role) = try authorizedWithRole(id, access)
        return (found.conversation, role)
    }

    func message(_ messageID: Int64, in id: ConversationID, access: AccessCheck) throws(StoreError) -> Message {
        let seq = try authorized(id, access).seq
        guard messageID >= 1 else { throw .messageNotFound(id, messageID: messageID) }
        let found = try one(seq: seq, id: messageID, conversation: id)
        guard !found.isEmpty else { throw .messageNotFound(id, messageID: messageID) }
        return found.message(at: 0)
    }

    // MARK: - Pages

    /// A page as docs/API.md "Pages" defines it; `query` was validated.
    func page(of id: ConversationID, _ query: PageQuery, access: AccessCheck) throws(StoreError) -> Page {
        let (seq, conversation) = try authorized(id, access)
        let limit = query.limit
        switch query.cursor {
        case .newest:
            let rows = try newest(seq: seq, limit: limit, budget: query.byteBudget, conversation: id)
            return Page(rows: rows, in: conversation, emptyHasOlder: false, emptyHasNewer: false)

        case .before(let before):
            var rows = try below(seq: seq, id: before, limit: limit, budget: query.byteBudget, conversation: id)
            rows.reverse()
            return Page(rows: rows, in: conversation, emptyHasOlder: false,
                        emptyHasNewer: conversation.newestID.map { $0 >= before } ?? false)

        case .after(let after):
            if let window = query.window {
                if try countAbove(seq: seq, id: after, atMost: window + 1) > window {
                    let rows = try newest(seq: seq, limit: limit, budget: query.byteBudget, conversation: id)
                    var result = Page(rows: rows, in: conversation, emptyHasOlder: false, emptyHasNewer: false)
                    result.reset = true
                    return result
                }
            }
            let rows = try above(seq: seq, id: after, limit: limit, budget: query.byteBudget, conversation: id)
            var result = Page(rows: rows, in: conversation,
                              emptyHasOlder: conversation.oldestID.map { $0 <= after } ?? false,
                              emptyHasNewer: false)
            if query.window != nil { result.reset = false }
            return result

        case .between(let after, let before):
            // Within (after, before): nothing is older than the first message
            // above `after`; one extra row says whether more lie below `before`.
            guard after < before else {
                return Page(rows: MessageRows(conversationID: id), hasOlder: false, hasNewer: false,
                            version: conversation.version)
            }
            var rows = try between(seq: seq, after: after, before: before, limit: limit + 1, conversation: id)
            let hasNewer = rows.count > limit
            if hasNewer { rows.removeLast() }
            return Page(rows: rows, hasOlder: false, hasNewer: hasNewer, version: conversation.version)

        case .around(let anchorID):
            return try around(anchorID, seq: seq, limit: limit, conversation: conversation)

        case .aroundTime(let time):
            guard let anchorID = try firstMessage(atOrAfter: time, seq: seq, oldestID: conversation.oldestID,
                                                  newestID: conversation.newestID, version: conversation.version) else {
                let rows = try newest(seq: seq, limit: limit, budget: query.byteBudget, conversation: id)
                var result = Page(rows: rows, in: conversation, emptyHasOlder: false, emptyHasNewer: false)
                result.anchor = Page.Anchor(id: nil, found: false, index: nil)
                return result
            }
            return try around(anchorID, seq: seq, limit: limit, conversation: conversation)
        }
    }

    /// `floor(limit/2)` older messages, the anchor when it exists, newer ones
    /// up to `limit`; when one side runs out, the other side fills the page.
    func around(_ anchorID: Int64, seq: Int64, limit: Int, conversation: Conversation) throws(StoreError) -> Page {
        let id = conversation.id
        let older = try below(seq: seq, id: anchorID, limit: limit, conversation: id)
        let anchor = try one(seq: seq, id: anchorID, conversation: id)
        let newer = try above(seq: seq, id: anchorID, limit: limit, conversation: id)
        let anchorCount = anchor.count
        let (olderTake, newerTake) = Page.aroundSplit(older: older.count, anchor: anchorCount, newer: newer.count, limit: limit)
        var rows = MessageRows(conversationID: id)
        rows.reserveCapacity(olderTake + anchorCount + newerTake)
        for index in (0..<olderTake).reversed() { rows.append(older, at: index) }
        if anchorCount == 1 { rows.append(anchor, at: 0) }
        for index in 0..<newerTake { rows.append(newer, at: index) }
        var result = Page(rows: rows, in: conversation, emptyHasOlder: false, emptyHasNewer: false)
        result.anchor = Page.Anchor(id: anchorID, found: anchorCount == 1, index: anchorCount == 1 ? olderTake : nil)
        return result
    }


    // MARK: - Changes

    /// The compacted change feed, as docs/API.md "Events" defines it; `query` was validated.
    func changes(in id: ConversationID, _ query: ChangeQuery, access: AccessCheck) throws(StoreError) -> ChangeFeed {
        let (seq, conversation) = try authorized(id, access)
        guard query.since <= conversation.version else {
            throw .versionAhead(requested: query.since, current: conversation.version)
        }
        // `+id` keeps the planner on messages_by_version: the id bounds only
        // filter that ordered range scan, they must not pick the primary key
        // (which would need a sort by version).
        let since = query.since
        if let resetAfter = query.resetAfter,
           try changeCount(seq: seq, query, atMost: resetAfter + 1, current: conversation.version) > resetAfter {
            return .reset(at: conversation.version)
        }
        var events = try sqlite { () throws(SQLiteError) in
            try connection.cachedStatement(sql: """
                SELECT \(StoredRows.messageColumns), created_version FROM messages
                WHERE conversation_seq = ? AND version > ? AND +id >= ? AND +id <= ?
                ORDER BY version LIMIT ?
                """).rows(seq, since, query.minID ?? 1, query.maxID ?? Int64.max, query.limit + 1) { row in
                let message = StoredRows.message(row, in: id)
                let kind: ChangeEvent.Kind = row.int64(9) > since ? .created : message.deleted ? .deleted : .edited
                return ChangeEvent(kind: kind, message: message)
            }
        }
        let hasMore = events.count > query.limit
        if hasMore { events.removeLast() }
        let version = hasMore ? events[events.count - 1].version : conversation.version
        return ChangeFeed(events: events, hasMore: hasMore, version: version)
    }

    /// How many changes after `query.since` lie in its id range, counting
    /// at most `bound` entries of `messages_by_version`. Each change took
    /// its own version, so when the version moved less than `bound` since,
    /// nothing is counted at all: the usual feed read pays no extra step.
    private func changeCount(seq: Int64, _ query: ChangeQuery, atMost bound: Int,
                             current: Int64) throws(StoreError) -> Int {
        guard current - query.since >= Int64(bound) else { return Int(current - query.since) }
        return try sqlite { () throws(SQLiteError) in
            try connection.cachedStatement(sql: """
                SELECT count(*) FROM (SELECT 1 FROM messages
                WHERE conversation_seq = ? AND version > ? AND +id >= ? AND +id <= ? LIMIT ?)
                """).firstRow(seq, query.since, query.minID ?? 1, query.maxID ?? Int64.max, bound) { Int($0.int64(0)) }
        } ?? 0
    }

    // MARK: - Keyset reads

    /// The newest `limit` messages, ascending.
    func newest(seq: Int64, limit: Int, budget: Int? = nil,
                        conversation: ConversationID) throws(StoreError) -> MessageRows {
        var rows = try descending(from: MessagePlace.upperBound(seq: seq), to: MessagePlace.lowerBound(seq: seq),
                                  limit: limit, budget: budget, conversation: conversation)
        rows.reverse()
        return rows
    }

    /// Up to `limit` messages below `id`, closest first (descending).
    private func below(seq: Int64, id: Int64, limit: Int, budget: Int? = nil,
                       conversation: ConversationID) throws(StoreError) -> MessageRows {
        try descending(from: MessagePlace.cursor(seq: seq, id: id), to: MessagePlace.lowerBound(seq: seq),
                       limit: limit, budget: budget, conversation: conversation)
    }

    /// Up to `limit` messages above `id`, ascending.
    private func above(seq: Int64, id: Int64, limit: Int, budget: Int? = nil,
                       conversation: ConversationID) throws(StoreError) -> MessageRows {
        try ascending(from: MessagePlace.cursor(seq: seq, id: id), to: MessagePlace.upperBound(seq: seq),
                      limit: limit, budget: budget, conversation: conversation)
    }

    private func between(seq: Int64, after: Int64, before: Int64, limit: Int,
                         conversation: ConversationID) throws(StoreError) -> MessageRows {
        try ascending(from: MessagePlace.cursor(seq: seq, id: after), to: MessagePlace.cursor(seq: seq, id: before),
                      limit: limit, conversation: conversation)
    }

    /// Up to `limit` messages with `lower < place < upper`, highest first:
    /// one seek on the rowid B-tree and a scan back.
    private func descending(from upper: Int64, to lower: Int64, limit: Int, budget: Int? = nil,
                            conversation: ConversationID) throws(StoreError) -> MessageRows {
        try pageRows(conversation: conversation, capacity: limit, budget: budget, sql: PageSQL.descending,
                     lower, upper, limit)
    }

    /// Up to `limit` messages with `lower < place < upper`, lowest first.
    private func ascending(from lower: Int64, to upper: Int64, limit: Int, budget: Int? = nil,
                           conversation: ConversationID) throws(StoreError) -> MessageRows {
        try pageRows(conversation: conversation, capacity: limit, budget: budget, sql: PageSQL.ascending,
                     lower, upper, limit)
    }

    /// The message `id` as zero or one rows, read whole.
    func one(seq: Int64, id: Int64, conversation: ConversationID) throws(StoreError) -> MessageRows {
        var rows = MessageRows(conversationID: conversation)
        guard MessagePlace.holds(id) else { return rows }
        try sqlite { () throws(SQLiteError) in try appendWhole(place: MessagePlace.of(seq: seq, id: id), to: &rows) }
        return rows
    }

    /// Runs a cached `PageSQL` query and keeps each row's stored JSON,
    /// stopping once the rows' bytes pass `budget` (see
    /// `PageQuery.byteBudget`: only for reads that walk away from a
    /// cursor). A row without stored JSON (written before migration 0008
    /// and not yet filled, or with a time no RFC 3339 year holds) is read
    /// whole by a second statement: rare, and the answer is the same bytes
    /// either way.
    private func pageRows(conversation: ConversationID, capacity: Int, budget: Int?, sql: String,
                          _ values: any SQLiteBindable...) throws(StoreError) -> MessageRows {
        try sqlite { () throws(SQLiteError) in
            var rows = MessageRows(conversationID: conversation)
            rows.reserveCapacity(capacity)
            let budget = budget ?? Int.max
            try connection.cachedStatement(sql: sql).run(values) { row throws(SQLiteError) -> Bool in
                if !StoredRows.appendStoredTail(row, to: &rows) {
                    try appendWhole(place: row.int64(0), to: &rows)
                }
                return rows.textByteCount >= budget
            }
            return rows
        }
    }

    /// The row at `place`, if any, with all of its columns.
    private func appendWhole(place: Int64, to rows: inout MessageRows) throws(SQLiteError) {
        try connection.cachedStatement(sql: PageSQL.whole).run([place]) { row throws(SQLiteError) in
            StoredRows.append(row, to: &rows)
        }
    }

    /// How many messages lie above `id`, counting no further than `atMost`
    /// (the window check must stay bounded however long the conversation).
    private func countAbove(seq: Int64, id: Int64, atMost: Int) throws(StoreError) -> Int {
        try sqlite { () throws(SQLiteError) in
            try connection.cachedStatement(sql: """
                SELECT count(*) FROM (SELECT 1 FROM messages WHERE place > ? AND place < ? LIMIT ?)
                """).firstRow(MessagePlace.cursor(seq: seq, id: id), MessagePlace.upperBound(seq: seq), atMost) {
                    Int($0.int64(0))
                } ?? 0
        }
    }
}
