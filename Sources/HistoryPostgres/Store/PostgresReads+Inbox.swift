import HistoryStore

/// The inbox reads: a user's conversations in inbox order, and the user
/// feed, fanned out on read by the same plans as SQLite's
/// `SQLiteReads+Inbox` (docs/architecture.md, "The inbox"), so their cost
/// does not grow with the user's number of conversations.
///
/// Each takes several statements, inside one `REPEATABLE READ READ ONLY`
/// transaction (`snapshot`): a page and the `activity` it reports come from
/// one snapshot, so a client following the feed from that value misses
/// nothing. The rows of a page are read by one statement whatever their
/// number (conversation, membership, last message and unread count each).
extension PostgresReads {
    package enum InboxSQL {
        /// The counter's value, and how many memberships the user has,
        /// counting no further than `$2` (`members_by_user` only: a large
        /// inbox does not pay for joining rows it will not use).
        package static let activityAndMembershipCount = """
            SELECT (SELECT value FROM activity_counter WHERE id = 1),
                   (SELECT count(*) FROM (SELECT 1 FROM members WHERE user_id = $1::text LIMIT $2::bigint) AS counted)
            """
        package static let activity = "SELECT value FROM activity_counter WHERE id = 1"

        /// Up to `$2` of the user's memberships, as places in the inbox
        /// order (seq, newest_id, id): read whole only when they are few
        /// (or as the walk's fallback).
        package static let memberships = """
            SELECT conversations.seq, conversations.newest_id, conversations.id FROM members
            JOIN conversations ON conversations.seq = members.conversation_seq
            WHERE members.user_id = $1::text LIMIT $2::bigint
            """
        /// Whether `$1` is a member of the conversation of the row: a scalar
        /// subquery, which PostgreSQL runs per row as one probe of
        /// `members_by_user`. (An `EXISTS` it may turn into a hash of all of
        /// the user's memberships, read whole: the cost the walk avoids.)
        static let isMember = """
            coalesce((SELECT true FROM members
                      WHERE members.conversation_seq = conversations.seq AND members.user_id = $1::text LIMIT 1), false)
            """
        /// The walk down the inbox order over every conversation with
        /// messages (`conversations_by_newest` backwards from `$2`), with
        /// whether `$1` is a member of each (one index probe per row).
        package static let newestBelow = """
            SELECT conversations.seq, conversations.newest_id,
                   \(isMember)
            FROM conversations WHERE newest_id < $2::bigint ORDER BY newest_id DESC LIMIT $3::bigint
            """
        /// The walk over the conversations without messages, by id after
        /// `$2`: ordered as `conversations_by_newest (newest_id, id)` is,
        /// where they are the one run of NULLs, so no sort.
        package static let emptyAfter = """
            SELECT conversations.seq, conversations.id,
                   \(isMember)
            FROM conversations WHERE newest_id IS NULL AND id > $2::text ORDER BY newest_id, id LIMIT $3::bigint
            """
        /// The inbox rows of `$1` in the conversations `$2` (an array):
        /// conversation (0...6), its id and activity (7, 8), the member's
        /// role, marker and activity (9...11), the newest message (12...20,
        /// one primary-key lookup) and the bounded unread scan (21, 22),
        /// counting up to `$3` (`PostgresUnread.scanLimit`); `$4` is `$1`'s
        /// UTF-8 bytes, which the scan compares to `sender` (a `bytea`).
        /// Driven by the seqs (`conversations_pkey`), each membership a
        /// probe of its primary key (a `LIMIT 1` lateral subquery, so
        /// PostgreSQL cannot instead read all of a user's memberships and
        /// join them).
        package static let rows = """
            SELECT \(PostgresRows.conversationColumns("c")), c.id, c.activity,
                   m.role, m.last_read_id, m.activity,
                   \(PostgresRows.messageColumns("last")),
                   unread.unread_count, unread.first_unread
            FROM conversations AS c
            CROSS JOIN LATERAL (
                SELECT role, last_read_id, activity FROM members
                WHERE conversation_seq = c.seq AND user_id = $1::text LIMIT 1
            ) AS m
            LEFT JOIN LATERAL (
                SELECT \(PostgresRows.messageColumns("messages")) FROM messages
                WHERE conversation_seq = c.seq AND id = c.newest_id LIMIT 1
            ) AS last ON true
            CROSS JOIN LATERAL (\(PostgresUnread.scan(seq: "c.seq", lastReadID: "m.last_read_id", user: "$4::bytea", limit: "$3::bigint"))) AS unread
            WHERE c.seq = ANY ($2::bigint[])
            """

        /// The user feed's changes after `$2`, one statement: kind 0 for a
        /// conversation that changed, 1 for the user's member row (marker,
        /// role, joined), 2 for a membership that ended (with the
        /// conversation's id). This variant, for few changes since `$2`
        /// (each took its own value, so at most `feedWalkLimit` rows, passed
        /// as `$3`), walks `conversations_by_activity` and probes membership
        /// per row. A parameter, not a constant, so a generic plan expects
        /// the LIMIT to stop the ordered walk early rather than sorting
        /// every conversation changed since `$2`.
        package static let changesByWalk = """
            SELECT 0, changed.seq, changed.activity, NULL::text FROM (
                SELECT seq, activity FROM conversations WHERE activity > $2::bigint ORDER BY activity LIMIT $3::bigint
            ) AS changed
            WHERE (SELECT true FROM members
                   WHERE members.conversation_seq = changed.seq AND members.user_id = $1::text LIMIT 1)
            \(memberAndRemovedChanges)
            """
        /// ... and for many: the user's memberships joined to their
        /// conversations (cost: the user's conversations).
        package static let changesByMemberships = """
            SELECT 0, conversations.seq, conversations.activity, NULL::text FROM members
            JOIN conversations ON conversations.seq = members.conversation_seq
            WHERE members.user_id = $1::text AND conversations.activity > $2::bigint
            \(memberAndRemovedChanges)
            """
        static let memberAndRemovedChanges = """
            UNION ALL
            SELECT 1, conversation_seq, activity, NULL::text FROM members WHERE user_id = $1::text AND activity > $2::bigint
            UNION ALL
            SELECT 2, removed_members.conversation_seq, removed_members.activity, conversations.id FROM removed_members
            JOIN conversations ON conversations.seq = removed_members.conversation_seq
            WHERE removed_members.user_id = $1::text AND removed_members.activity > $2::bigint
            """
        /// The user's conversation seqs, for parking a wait: `members_by_user` only.
        package static let membershipSeqs = "SELECT conversation_seq FROM members WHERE user_id = $1::text LIMIT $2::bigint"
    }

    /// Below this many changes since A, the user feed walks the changed
    /// conversations instead of the user's memberships.
    package static let feedWalkLimit: Int64 = 4096

    /// A conversation's place in the inbox order.
    struct InboxPlace: InboxPlaced {
        var seq: Int64
        var place: InboxCursor
    }

    // MARK: - Inbox pages

    /// `limit` rows after `cursor` in inbox order (from the top when nil).
    package func inbox(of user: UserID, limit: Int, after cursor: InboxCursor?) throws(StoreError) -> InboxPage {
        try snapshot { () throws(StoreError) -> InboxPage in
            let counted = try run(InboxSQL.activityAndMembershipCount,
                                  [.text(user.rawValue), .int64(Int64(InboxWalk.smallInbox + 1))])
            guard counted.rowCount == 1, !counted.isNull(0, 0) else {
                throw StoreError.storageFailure("the activity counter's row is missing")
            }
            let activity = counted.int64(0, 0)
            let found: [InboxPlace]
            var steps = InboxSteps(reads: self, user: user)
            if counted.int64(0, 1) <= InboxWalk.smallInbox {
                found = try memberships(of: user, limit: Int64(InboxWalk.smallInbox))
            } else if let walked = try InboxWalk.walk(after: cursor, wanted: limit + 1, steps: &steps) {
                found = walked
            } else {
                found = try memberships(of: user, limit: .max)
            }
            let (chosen, hasMore) = InboxWalk.page(found, after: cursor, limit: limit)
            let rows = try inboxRows(of: user, seqs: chosen.map(\.seq))
            return InboxPage(rows: chosen.compactMap { rows[$0.seq] },
                             nextCursor: hasMore ? chosen.last?.place.encoded : nil, activity: activity)
        }
    }

    /// PostgreSQL's statements for `InboxWalk`: one each, reading the
    /// conversations of one part of the inbox order with a flag saying
    /// whether the user is a member (a primary-key probe per row).
    private struct InboxSteps: InboxWalkSteps {
        let reads: PostgresReads
        let user: UserID

        func withMessages(below: Int64, size: Int,
                          missing: Int) throws(StoreError) -> (found: [InboxPlace], examined: Int, next: Int64?) {
            let result = try reads.run(InboxSQL.newestBelow, [.text(user.rawValue), .int64(below), .int64(Int64(size))])
            var found: [InboxPlace] = []
            var examined = 0
            var last = below
            for row in 0..<result.rowCount where found.count < missing {
                examined += 1
                last = result.int64(row, 1)
                if result.bool(row, 2) { found.append(InboxPlace(seq: result.int64(row, 0), place: .message(newestID: last))) }
            }
            return (found, examined, result.rowCount < size ? nil : last)
        }

        func withoutMessages(after: String, size: Int,
                             missing: Int) throws(StoreError) -> (found: [InboxPlace], examined: Int, next: String?) {
            let result = try reads.run(InboxSQL.emptyAfter, [.text(user.rawValue), .text(after), .int64(Int64(size))])
            var found: [InboxPlace] = []
            var examined = 0
            var last = after
            for row in 0..<result.rowCount where found.count < missing {
                examined += 1
                last = result.string(row, 1)
                if result.bool(row, 2), let id = ConversationID(last) {
                    found.append(InboxPlace(seq: result.int64(row, 0), place: .empty(id)))
                }
            }
            return (found, examined, result.rowCount < size ? nil : last)
        }
    }

    // MARK: - The user feed

    /// The user feed as docs/API.md "Inbox" defines it; `query` was validated.
    package func inboxChanges(of user: UserID, _ query: InboxChangeQuery) throws(StoreError) -> InboxChangeFeed {
        try snapshot { () throws(StoreError) -> InboxChangeFeed in
            let current = try currentActivity()
            guard query.since <= current else { throw .versionAhead(requested: query.since, current: current) }
            let changed = try changedConversations(of: user, since: query.since, current: current)
            return try InboxFeedPage.make(changed, limit: query.limit, current: current,
                                         resetAfter: query.resetAfter) { seqs throws(StoreError) in
                try inboxRows(of: user, seqs: seqs)
            }
        }
    }

    /// Whether the user feed has anything after `since` (a parked wait's
    /// first look).
    package func hasInboxChanges(of user: UserID, after since: Int64) throws(StoreError) -> Bool {
        try snapshot { () throws(StoreError) -> Bool in
            let current = try currentActivity()
            guard since < current else { return false }
            return try !changedConversations(of: user, since: since, current: current).isEmpty
        }
    }

    /// The user's conversations changed after `since`, one per conversation
    /// with its latest change, unordered.
    private func changedConversations(of user: UserID, since: Int64, current: Int64) throws(StoreError) -> [InboxConversationChange] {
        let result = current - since <= Self.feedWalkLimit
            ? try run(InboxSQL.changesByWalk, [.text(user.rawValue), .int64(since), .int64(Self.feedWalkLimit)])
            : try run(InboxSQL.changesByMemberships, [.text(user.rawValue), .int64(since)])
        var latest: [Int64: InboxConversationChange] = [:]
        var removals: [InboxConversationChange] = []
        for row in 0..<result.rowCount {
            let seq = result.int64(row, 1)
            let activity = result.int64(row, 2)
            if result.int64(row, 0) == 2 {
                guard let id = result.optionalString(row, 3).flatMap(ConversationID.init) else { continue }
                removals.append(InboxConversationChange(seq: seq, activity: activity, removedID: id))
            } else if (latest[seq]?.activity ?? .min) < activity {
                latest[seq] = InboxConversationChange(seq: seq, activity: activity)
            }
        }
        // A removal row exists only while the user is not a member again.
        for removal in removals { latest[removal.seq] = removal }
        return Array(latest.values)
    }

    // MARK: - Waits

    /// Up to `limit` of the user's conversation seqs.
    package func membershipSeqs(of user: UserID, limit: Int) throws(StoreError) -> [Int64] {
        let result = try run(InboxSQL.membershipSeqs, [.text(user.rawValue), .int64(Int64(limit))])
        return (0..<result.rowCount).map { result.int64($0, 0) }
    }

    // MARK: - Rows

    package func currentActivity() throws(StoreError) -> Int64 {
        let result = try run(InboxSQL.activity, [])
        guard result.rowCount == 1 else { throw StoreError.storageFailure("the activity counter's row is missing") }
        return result.int64(0, 0)
    }

    private func memberships(of user: UserID, limit: Int64) throws(StoreError) -> [InboxPlace] {
        let result = try run(InboxSQL.memberships, [.text(user.rawValue), .int64(limit)])
        return (0..<result.rowCount).compactMap { row in
            if let newest = result.optionalInt64(row, 1) {
                return InboxPlace(seq: result.int64(row, 0), place: .message(newestID: newest))
            }
            return ConversationID(result.string(row, 2)).map { InboxPlace(seq: result.int64(row, 0), place: .empty($0)) }
        }
    }

    /// The rows a client draws for `seqs` (those the user is a member of),
    /// by seq: one statement for them all.
    private func inboxRows(of user: UserID, seqs: [Int64]) throws(StoreError) -> [Int64: InboxRow] {
        guard !seqs.isEmpty else { return [:] }
        let array = "{" + seqs.map(String.init).joined(separator: ",") + "}"
        let result = try run(InboxSQL.rows, [.text(user.rawValue), .text(array), .int64(Int64(PostgresUnread.scanLimit)),
                                               .storedText(user.rawValue)])
        var rows: [Int64: InboxRow] = [:]
        rows.reserveCapacity(result.rowCount)
        for row in 0..<result.rowCount {
            guard let id = ConversationID(result.string(row, 7)),
                  let role = MemberRole(rawValue: result.string(row, 9)) else { continue }
            let (seq, conversation) = PostgresRows.conversation(result, row: row, at: 0, id: id)
            let lastReadID = result.optionalInt64(row, 10)
            let unread = PostgresUnread.counted(result, row: row, at: 21)
            rows[seq] = InboxRow(
                conversation: conversation, role: role,
                lastMessage: PostgresRows.message(result, row: row, at: 12, in: id),
                read: ReadState(lastReadID: lastReadID, firstUnreadID: unread.firstUnreadID,
                                unreadCount: unread.count, unreadCapped: unread.capped),
                activity: max(result.int64(row, 8), result.int64(row, 11)))
        }
        return rows
    }

    /// Runs `body` in a `REPEATABLE READ READ ONLY` transaction: every
    /// statement in it sees one snapshot. Read-only at that level, it can
    /// neither block a writer nor fail with a serialization error.
    ///
    /// On a connection already inside a transaction, `body` runs in that
    /// one (a BEGIN there would only warn, and this COMMIT would end the
    /// caller's transaction): the caller's isolation level then decides
    /// what the statements see.
    func snapshot<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        guard connection.transactionStatus == .idle else { return try body() }
        _ = try pgRead { () throws(PostgresError) in
            try connection.execute(sql: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        }
        let value: T
        do {
            value = try body()
            _ = try pgRead { () throws(PostgresError) in try connection.execute(sql: "COMMIT") }
        } catch {
            if !connection.isBroken { _ = try? connection.execute(sql: "ROLLBACK") }
            throw error
        }
        return value
    }
}
