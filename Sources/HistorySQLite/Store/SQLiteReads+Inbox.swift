import HistoryStore
/// The inbox reads: a user's conversations in inbox order, and the user
/// feed, fan-out on read. Nothing is written per member when a message is
/// posted, so these reads join the user's memberships to the conversations,
/// by plans whose cost does not grow with the user's number of
/// conversations (docs/architecture.md, "The inbox").
extension SQLiteReads {
    /// The statements, named so a test can ask SQLite for their plans.
    enum InboxSQL {
        static let activity = "SELECT value FROM activity_counter WHERE id = 1"

        /// The columns of `InboxMembership`: the conversation, then the member.
        static let membershipColumns = """
            \(StoredRows.conversationColumns), conversations.activity,
            members.role, members.last_read_id, members.activity
            """
        /// A user's memberships joined to their conversations, through
        /// `members_by_user` (named: `members_by_user_activity` serves
        /// `user_id = ?` as well, in an order that helps nothing); read whole
        /// only when they are few (or as the walks' fallback).
        static let memberships = """
            SELECT \(membershipColumns) FROM members INDEXED BY members_by_user
            JOIN conversations ON conversations.seq = members.conversation_seq
            WHERE members.user_id = ? LIMIT ?
            """
        static let membershipBySeq = """
            SELECT \(membershipColumns) FROM conversations
            JOIN members ON members.conversation_seq = conversations.seq AND members.user_id = ?
            WHERE conversations.seq = ?
            """
        /// The probe of the walks: one seek, answered from `members_by_user` alone.
        static let isMember = "SELECT 1 FROM members WHERE conversation_seq = ? AND user_id = ?"
        /// The walk down the inbox order over every conversation with
        /// messages, a range at a time: the lowest `newest_id` of the next
        /// `?` conversations below `?` and how many there were (the range's
        /// end, stepping `conversations_by_newest` alone) ...
        static let newestRangeBelow = """
            SELECT min(newest_id), count(*) FROM (
                SELECT newest_id FROM conversations WHERE newest_id < ? ORDER BY newest_id DESC LIMIT ?)
            """
        /// ... then the user's memberships in that range, newest first, one
        /// primary-key probe of `members` per conversation inside SQLite:
        /// a page of a user whose conversations are the recent ones costs
        /// two statements, not a probe and a read per row.
        static let membershipsInRange = """
            SELECT \(membershipColumns) FROM conversations INDEXED BY conversations_by_newest
            JOIN members ON members.conversation_seq = conversations.seq AND members.user_id = ?
            WHERE conversations.newest_id < ? AND conversations.newest_id >= ?
            ORDER BY conversations.newest_id DESC LIMIT ?
            """
        /// The walk over the conversations without messages, by id.
        static let emptyAfter = """
            SELECT seq, id FROM conversations WHERE newest_id IS NULL AND id > ? ORDER BY id LIMIT ?
            """
        static let lastMessage = "SELECT \(StoredRows.messageColumns) FROM messages WHERE place = ?"

        /// The user feed: conversations changed after A, through
        /// `conversations_by_activity` (few changes since A) ...
        static let conversationsChangedAfter = """
            SELECT seq, activity FROM conversations WHERE activity > ? ORDER BY activity LIMIT ?
            """
        /// ... or the user's memberships joined to the conversations (many;
        /// `+` keeps SQLite from walking `conversations_by_activity` instead).
        static let membershipsChangedAfter = """
            SELECT conversations.seq, conversations.activity FROM members
            JOIN conversations ON conversations.seq = members.conversation_seq
            WHERE members.user_id = ? AND +conversations.activity > ?
            """
        /// Member rows changed after A (marker, role, joined), through `members_by_user_activity`.
        static let memberRowsChangedAfter = """
            SELECT conversation_seq, activity FROM members WHERE user_id = ? AND activity > ?
            """
        static let removedAfter = """
            SELECT removed_members.conversation_seq, removed_members.activity, conversations.id FROM removed_members
            JOIN conversations ON conversations.seq = removed_members.conversation_seq
            WHERE removed_members.user_id = ? AND removed_members.activity > ?
            """
        /// How many memberships the user has, counting no further than asked:
        /// `members_by_user` only, so a large inbox does not pay for joining
        /// rows it will not use.
        static let membershipCount = """
            SELECT count(*) FROM (SELECT 1 FROM members INDEXED BY members_by_user WHERE user_id = ? LIMIT ?)
            """
        /// The user's conversation seqs, for parking a wait: `members_by_user` only.
        static let membershipSeqs = "SELECT conversation_seq FROM members WHERE user_id = ? LIMIT ?"
    }

    /// Up to this many changes since A, the user feed may walk the changed
    /// conversations instead of the user's memberships (it does when the
    /// user has more memberships than there were changes).
    static let feedWalkLimit: Int64 = 4096

    /// One of the user's memberships with its conversation.
    struct InboxMembership: InboxPlaced {
        var seq: Int64
        var conversation: Conversation
        var conversationActivity: Int64
        var role: MemberRole
        var lastReadID: Int64?
        var memberActivity: Int64

        var place: InboxCursor { InboxCursor(conversation) }
        var activity: Int64 { max(conversationActivity, memberActivity) }

        /// nil for a row this code cannot read (an unknown role or id).
        init?(_ row: SQLiteRow) {
            guard let found = StoredRows.conversation(row),
                  let role = MemberRole(rawValue: row.string(9)) else { return nil }
            self.seq = found.seq
            self.conversation = found.conversation
            self.conversationActivity = row.int64(8)
            self.role = role
            self.lastReadID = row.optionalInt64(10)
            self.memberActivity = row.int64(11)
        }
    }

    func currentActivity() throws(StoreError) -> Int64 {
        let value = try sqlite { () throws(SQLiteError) in
            try connection.cachedStatement(sql: InboxSQL.activity).firstRow { $0.int64(0) }
        }
        guard let value else { throw .impossibleStoredValue("the activity counter's row is missing") }
        return value
    }

    // MARK: - Inbox pages

    /// `limit` rows after `cursor` in inbox order (from the top when nil).
    func inbox(of user: UserID, limit: Int, after cursor: InboxCursor?) throws(StoreError) -> InboxPage {
        let activity = try currentActivity()
        // A large inbox stays known as one (`LargeInboxes`): not counted again.
        var isLarge = largeInboxes.contains(user)
        if !isLarge, try membershipCount(of: user, upTo: InboxWalk.smallInbox + 1) > InboxWalk.smallInbox {
            isLarge = true
            largeInboxes.insert(user)
        }
        let found: [InboxMembership]
        var steps = InboxSteps(reads: self, user: user)
        if !isLarge {
            found = try memberships(of: user, limit: InboxWalk.smallInbox)
        } else if let walked = try InboxWalk.walk(after: cursor, wanted: limit + 1, steps: &steps) {
            found = walked
        } else {
            found = try allMemberships(of: user)
        }
        let (chosen, hasMore) = InboxWalk.page(found, after: cursor, limit: limit)
        var rows: [InboxRow] = []
        rows.reserveCapacity(chosen.count)
        for membership in chosen { rows.append(try row(of: membership, user: user)) }
        return InboxPage(rows: rows, nextCursor: hasMore ? chosen.last?.place.encoded : nil, activity: activity)
    }

    /// SQLite's statements for `InboxWalk`: a range of the conversations
    /// with messages (by `conversations_by_newest`) and the user's
    /// memberships in it (a primary-key lookup each); the conversations
    /// without messages by id, probing each.
    private struct InboxSteps: InboxWalkSteps {
        let reads: SQLiteReads
        let user: UserID

        func withMessages(below: Int64, size: Int,
                          missing: Int) throws(StoreError) -> (found: [InboxMembership], examined: Int, next: Int64?) {
            let range = try sqlite { () throws(SQLiteError) in
                try reads.connection.cachedStatement(sql: InboxSQL.newestRangeBelow)
                    .firstRow(below, size) { (lowest: $0.optionalInt64(0), count: Int($0.int64(1))) }
            }
            guard let range, let lowest = range.lowest else { return ([], 0, nil) }
            let found = try sqlite { () throws(SQLiteError) in
                try reads.connection.cachedStatement(sql: InboxSQL.membershipsInRange)
                    .rows(user.rawValue, below, lowest, missing, map: InboxMembership.init)
            }.compactMap { $0 }
            return (found, range.count, range.count < size ? nil : lowest)
        }

        func withoutMessages(after: String, size: Int,
                             missing: Int) throws(StoreError) -> (found: [InboxMembership], examined: Int, next: String?) {
            let rows = try sqlite { () throws(SQLiteError) in
                try reads.connection.cachedStatement(sql: InboxSQL.emptyAfter)
                    .rows(after, size) { (seq: $0.int64(0), id: $0.string(1)) }
            }
            var found: [InboxMembership] = []
            var examined = 0
            var last = after
            for row in rows where found.count < missing {
                examined += 1
                last = row.id
                if try reads.isMember(user, seq: row.seq), let membership = try reads.membership(of: user, seq: row.seq) {
                    found.append(membership)
                }
            }
            return (found, examined, rows.isEmpty ? nil : last)
        }
    }

    // MARK: - The user feed

    /// The user feed as docs/API.md "Inbox" defines it; `query` was validated.
    func inboxChanges(of user: UserID, _ query: InboxChangeQuery) throws(StoreError) -> InboxChangeFeed {
        let current = try currentActivity()
        guard query.since <= current else { throw .versionAhead(requested: query.since, current: current) }
        let changed = try changedConversations(of: user, since: query.since, current: current)
        return try InboxFeedPage.make(changed, limit: query.limit, current: current,
                                         resetAfter: query.resetAfter) { seqs throws(StoreError) in
            var rows: [Int64: InboxRow] = [:]
            for seq in seqs {
                if let membership = try membership(of: user, seq: seq) { rows[seq] = try row(of: membership, user: user) }
            }
            return rows
        }
    }

    /// Whether the user feed has anything after `since` (a parked wait's
    /// first look).
    func hasInboxChanges(of user: UserID, after since: Int64) throws(StoreError) -> Bool {
        let current = try currentActivity()
        guard since < current else { return false }
        return try !changedConversations(of: user, since: since, current: current).isEmpty
    }

    /// The user's conversations changed after `since`, one per conversation
    /// with its latest change, unordered.
    private func changedConversations(of user: UserID, since: Int64, current: Int64) throws(StoreError) -> [InboxConversationChange] {
        var latest: [Int64: InboxConversationChange] = [:]
        func note(_ seq: Int64, _ activity: Int64) {
            if let known = latest[seq], known.activity >= activity { return }
            latest[seq] = InboxConversationChange(seq: seq, activity: activity)
        }
        // Each change took its own value, so at most current - since
        // conversations changed: walk them, probing each, only when the
        // user has more memberships than that. A user in two conversations
        // parked for a while (hundreds of other conversations changed
        // meanwhile) reads its two memberships instead of probing hundreds
        // of conversations: the feed costs O(min(changes, memberships)),
        // the count included (it stops at the number of changes).
        let span = current - since
        if span <= Self.feedWalkLimit, try membershipCount(of: user, upTo: Int(span) + 1) > span {
            let changed = try sqlite { () throws(SQLiteError) in
                try connection.cachedStatement(sql: InboxSQL.conversationsChangedAfter)
                    .rows(since, Self.feedWalkLimit) { (seq: $0.int64(0), activity: $0.int64(1)) }
            }
            for conversation in changed {
                if try isMember(user, seq: conversation.seq) { note(conversation.seq, conversation.activity) }
            }
        } else {
            let changed = try sqlite { () throws(SQLiteError) in
                try connection.cachedStatement(sql: InboxSQL.membershipsChangedAfter)
                    .rows(user.rawValue, since) { (seq: $0.int64(0), activity: $0.int64(1)) }
            }
            for conversation in changed { note(conversation.seq, conversation.activity) }
        }
        let memberRows = try sqlite { () throws(SQLiteError) in
            try connection.cachedStatement(sql: InboxSQL.memberRowsChangedAfter)
                .rows(user.rawValue, since) { (seq: $0.int64(0), activity: $0.int64(1)) }
        }
        for member in memberRows { note(member.seq, member.activity) }
        // A removal row exists only while the user is not a member again.
        let removed = try sqlite { () throws(SQLiteError) in
            try connection.cachedStatement(sql: InboxSQL.removedAfter)
                .rows(user.rawValue, since) { (seq: $0.int64(0), activity: $0.int64(1), id: $0.string(2)) }
        }
        for removal in removed {
            guard let id = ConversationID(removal.id) else { continue }
            latest[removal.seq] = InboxConversationChange(seq: removal.seq, activity: removal.activity, removedID: id)
        }
        return Array(latest.values)
    }

    /// How many memberships the user has, counting no further than `limit`.
    private func membershipCount(of user: UserID, upTo limit: Int) throws(StoreError) -> Int {
        try sqlite { () throws(SQLiteError) in
            try connection.cachedStatement(sql: InboxSQL.membershipCount).firstRow(user.rawValue, limit) { Int($0.int64(0)) } ?? 0
        }
    }

    // MARK: - Waits

    /// Up to `limit` of the user's conversation seqs.
    func membershipSeqs(of user: UserID, limit: Int) throws(StoreError) -> [Int64] {
        try sqlite { () throws(SQLiteError) in
            try connection.cachedStatement(sql: InboxSQL.membershipSeqs).rows(user.rawValue, limit) { $0.int64(0) }
        }
    }

    // MARK: - Rows

    private func memberships(of user: UserID, limit: Int) throws(StoreError) -> [InboxMembership] {
        try sqlite { () throws(SQLiteError) in
            try connection.cachedStatement(sql: InboxSQL.memberships).rows(user.rawValue, limit, map: InboxMembership.init)
        }.compactMap { $0 }
    }

    private func allMemberships(of user: UserID) throws(StoreError) -> [InboxMembership] {
        try memberships(of: user, limit: Int.max)
    }

    fileprivate func membership(of user: UserID, seq: Int64) throws(StoreError) -> InboxMembership? {
        try sqlite { () throws(SQLiteError) in
            try connection.cachedStatement(sql: InboxSQL.membershipBySeq).firstRow(user.rawValue, seq, map: InboxMembership.init)
        } ?? nil
    }

    fileprivate func isMember(_ user: UserID, seq: Int64) throws(StoreError) -> Bool {
        try sqlite { () throws(SQLiteError) in
            try connection.cachedStatement(sql: InboxSQL.isMember).firstRow(seq, user.rawValue) { _ in true } ?? false
        }
    }

    /// The row a client draws: the membership, its conversation's newest
    /// message (one lookup by place) and the unread state (a bounded scan).
    private func row(of membership: InboxMembership, user: UserID) throws(StoreError) -> InboxRow {
        var lastMessage: Message?
        if let newest = membership.conversation.newestID, MessagePlace.holds(newest) {
            let id = membership.conversation.id
            lastMessage = try sqlite { () throws(SQLiteError) in
                try connection.cachedStatement(sql: InboxSQL.lastMessage)
                    .firstRow(MessagePlace.of(seq: membership.seq, id: newest)) { StoredRows.message($0, in: id) }
            }
        }
        let read = try UnreadScan.readState(connection, seq: membership.seq, user: user, lastReadID: membership.lastReadID)
        return InboxRow(conversation: membership.conversation, role: membership.role, lastMessage: lastMessage,
                        read: read, activity: membership.activity)
    }
}
