import HistoryPostgres
import HistoryStore
import HistoryTestSupport
import Testing

extension PostgresTests {
    /// The read path of the PostgreSQL store against rows written with
    /// plain SQL: every page kind and flag, the change feed, members, the
    /// unread count and the inbox, as the SQLite store answers them.
    @Suite struct PostgresReadsTests {
        // MARK: - Unread

        @Test func unreadCountsMessagesAboveTheMarkerNotDeletedNotOwn() async throws {
            try await withTestDatabase { uri in
                let fixture = try PostgresReadsFixture(uri: uri)
                let seq = try fixture.conversation("c")
                let ann = UserID("ann")!
                // Nothing at all: nothing unread.
                var state = try PostgresUnread.state(fixture.connection, seq: seq, user: ann, lastReadID: nil)
                #expect(state.firstUnreadID == nil && state.count == 0 && !state.capped)

                let first = try fixture.append(seq, sender: "bob")
                let own = try fixture.append(seq, sender: "ann")
                let deleted = try fixture.append(seq, sender: "bob")
                let third = try fixture.append(seq, sender: "cy")
                try fixture.delete(seq, deleted)
                // Another conversation's messages never count.
                let other = try fixture.conversation("d")
                try fixture.append(other, count: 5, sender: "bob")

                state = try PostgresUnread.state(fixture.connection, seq: seq, user: ann, lastReadID: nil)
                #expect(state.firstUnreadID == first && state.count == 2 && !state.capped)
                state = try PostgresUnread.state(fixture.connection, seq: seq, user: ann, lastReadID: first)
                #expect(state.firstUnreadID == third && state.count == 1)
                state = try PostgresUnread.state(fixture.connection, seq: seq, user: ann, lastReadID: own)
                #expect(state.firstUnreadID == third && state.count == 1)
                state = try PostgresUnread.state(fixture.connection, seq: seq, user: ann, lastReadID: third)
                #expect(state.firstUnreadID == nil && state.count == 0 && !state.capped)
                // The sender's own view: ann's message counts for bob.
                let read = try PostgresUnread.readState(fixture.connection, seq: seq, user: UserID("bob")!, lastReadID: 0)
                #expect(read == ReadState(lastReadID: 0, firstUnreadID: own, unreadCount: 2, unreadCapped: false))
            }
        }

        @Test func unreadIsExactTo999AndCappedPastIt() async throws {
            try await withTestDatabase { uri in
                let fixture = try PostgresReadsFixture(uri: uri)
                let seq = try fixture.conversation("c")
                let bob = UserID("bob")!
                let ids = try fixture.append(seq, count: 999, sender: "ann")
                var state = try PostgresUnread.state(fixture.connection, seq: seq, user: bob, lastReadID: nil)
                #expect(state.firstUnreadID == ids[0] && state.count == 999 && !state.capped)
                try fixture.append(seq, count: 1, sender: "ann")
                state = try PostgresUnread.state(fixture.connection, seq: seq, user: bob, lastReadID: nil)
                #expect(state.firstUnreadID == ids[0] && state.count == 999 && state.capped)
                try fixture.append(seq, count: 3_000, sender: "ann")
                state = try PostgresUnread.state(fixture.connection, seq: seq, user: bob, lastReadID: ids[1])
                #expect(state.firstUnreadID == ids[2] && state.count == 999 && state.capped)
                // Bounded: the statement stops at the 1,000th row (LIMIT over
                // the primary key), never counting the conversation, in the
                // generic plan PostgreSQL keeps for it once the data looks
                // real (several senders, several conversations; with one
                // sender in the whole table, statistics say "nobody else
                // posted" and a sort of the few rows it expects is cheaper).
                func expectBoundedPlan() throws {
                    let plan = try fixture.plan(PostgresUnread.sql, ["\(seq)", "\(ids[1])", "'bob'", "\(PostgresUnread.scanLimit)"])
                    #expect(plan.contains("Limit"))
                    #expect(plan.contains("Index Scan using messages_pkey"))
                    #expect(!plan.contains("Seq Scan") && !plan.contains("Sort"), "\(plan)")
                }
                for (index, sender) in ["cy", "dee", "eve", "fay"].enumerated() {
                    let other = try fixture.conversation("other-\(index)")
                    try fixture.append(other, count: 2_000, sender: sender)
                    try fixture.append(seq, count: 500, sender: sender)
                }
                try expectBoundedPlan()
            }
        }

        // MARK: - Pages

        /// Ten messages in "c" whose ids interleave with those of "d", so a
        /// page that leaked into a neighbour would show.
        private func tenMessages(_ fixture: PostgresReadsFixture) throws -> (seq: Int64, ids: [Int64]) {
            let seq = try fixture.conversation("c", title: "Chat")
            let other = try fixture.conversation("d")
            var ids: [Int64] = []
            for index in 0..<10 {
                ids.append(try fixture.append(seq, sender: index % 2 == 0 ? "ann" : "bob", body: "m\(index)"))
                try fixture.append(other, sender: "cy", body: "other")
            }
            return (seq, ids)
        }

        private func ids(_ page: Page) -> [Int64] { page.rows.records.map(\.id) }

        @Test func newestBeforeAndAfterPagesCarryExactFlags() async throws {
            try await withTestDatabase { uri in
                let fixture = try PostgresReadsFixture(uri: uri)
                let (_, m) = try tenMessages(fixture)
                let reads = fixture.reads
                let c = ConversationID("c")!

                var page = try reads.page(of: c, PageQuery(cursor: .newest, limit: 3))
                #expect(ids(page) == Array(m[7...9]) && page.hasOlder && !page.hasNewer)
                #expect(page.version == 10 && page.anchor == nil && page.reset == nil)
                #expect(page.messages.map(\.body) == ["m7", "m8", "m9"])
                page = try reads.page(of: c, PageQuery(cursor: .newest, limit: 200))
                #expect(ids(page) == m && !page.hasOlder && !page.hasNewer)

                page = try reads.page(of: c, PageQuery(cursor: .before(m[5]), limit: 3))
                #expect(ids(page) == Array(m[2...4]) && page.hasOlder && page.hasNewer)
                page = try reads.page(of: c, PageQuery(cursor: .before(m[2]), limit: 3))
                #expect(ids(page) == Array(m[0...1]) && !page.hasOlder && page.hasNewer)
                page = try reads.page(of: c, PageQuery(cursor: .before(m[0]), limit: 3))
                #expect(ids(page) == [] && !page.hasOlder && page.hasNewer)
                page = try reads.page(of: c, PageQuery(cursor: .before(Int64.max), limit: 3))
                #expect(ids(page) == Array(m[7...9]) && page.hasOlder && !page.hasNewer)

                page = try reads.page(of: c, PageQuery(cursor: .after(m[5]), limit: 3))
                #expect(ids(page) == Array(m[6...8]) && page.hasOlder && page.hasNewer && page.reset == nil)
                page = try reads.page(of: c, PageQuery(cursor: .after(0), limit: 3))
                #expect(ids(page) == Array(m[0...2]) && !page.hasOlder && page.hasNewer)
                page = try reads.page(of: c, PageQuery(cursor: .after(m[9]), limit: 3))
                #expect(ids(page) == [] && page.hasOlder && !page.hasNewer)
                page = try reads.page(of: c, PageQuery(cursor: .after(Int64.max), limit: 3))
                #expect(ids(page) == [] && page.hasOlder && !page.hasNewer)

                // An empty conversation: every page is empty, flags false.
                try fixture.conversation("empty")
                let empty = ConversationID("empty")!
                for cursor: PageCursor in [.newest, .before(5), .after(0), .between(after: 0, before: 9), .around(3)] {
                    page = try reads.page(of: empty, PageQuery(cursor: cursor, limit: 3))
                    #expect(ids(page) == [] && !page.hasOlder && !page.hasNewer && page.version == 0, "\(cursor)")
                }
                #expect(throws: StoreError.conversationNotFound(ConversationID("nope")!)) {
                    try reads.page(of: ConversationID("nope")!, PageQuery())
                }
            }
        }

        @Test func afterWithAWindowResetsToTheNewestPageWhenTooFarBehind() async throws {
            try await withTestDatabase { uri in
                let fixture = try PostgresReadsFixture(uri: uri)
                let (_, m) = try tenMessages(fixture)
                let c = ConversationID("c")!
                // Four messages above m5: a window of 3 is passed...
                var page = try fixture.reads.page(of: c, PageQuery(cursor: .after(m[5]), limit: 2, window: 3))
                #expect(page.reset == true && ids(page) == Array(m[8...9]) && page.hasOlder && !page.hasNewer)
                // ... one of 4 is not.
                page = try fixture.reads.page(of: c, PageQuery(cursor: .after(m[5]), limit: 2, window: 4))
                #expect(page.reset == false && ids(page) == Array(m[6...7]) && page.hasOlder && page.hasNewer)
                page = try fixture.reads.page(of: c, PageQuery(cursor: .after(m[9]), limit: 2, window: 1))
                #expect(page.reset == false && ids(page) == [] && page.hasOlder && !page.hasNewer)
                page = try fixture.reads.page(of: c, PageQuery(cursor: .after(0), limit: 3, window: 10_000))
                #expect(page.reset == false && ids(page) == Array(m[0...2]) && !page.hasOlder && page.hasNewer)
                page = try fixture.reads.page(of: c, PageQuery(cursor: .after(0), limit: 3, window: 9))
                #expect(page.reset == true && ids(page) == Array(m[7...9]) && page.hasOlder && !page.hasNewer)
            }
        }

        @Test func betweenPagesStayInsideTheirRange() async throws {
            try await withTestDatabase { uri in
                let fixture = try PostgresReadsFixture(uri: uri)
                let (_, m) = try tenMessages(fixture)
                let c = ConversationID("c")!
                var page = try fixture.reads.page(of: c, PageQuery(cursor: .between(after: m[2], before: m[6]), limit: 10))
                #expect(ids(page) == Array(m[3...5]) && !page.hasOlder && !page.hasNewer && page.version == 10)
                page = try fixture.reads.page(of: c, PageQuery(cursor: .between(after: m[2], before: m[6]), limit: 3))
                #expect(ids(page) == Array(m[3...5]) && !page.hasOlder && !page.hasNewer)
                page = try fixture.reads.page(of: c, PageQuery(cursor: .between(after: m[2], before: m[6]), limit: 2))
                #expect(ids(page) == Array(m[3...4]) && !page.hasOlder && page.hasNewer)
                page = try fixture.reads.page(of: c, PageQuery(cursor: .between(after: m[6], before: m[2]), limit: 2))
                #expect(ids(page) == [] && !page.hasOlder && !page.hasNewer)
                page = try fixture.reads.page(of: c, PageQuery(cursor: .between(after: 0, before: .max), limit: 200))
                #expect(ids(page) == m && !page.hasNewer)
            }
        }

        @Test func aroundPagesCenterTheAnchorAndFillFromTheOtherSide() async throws {
            try await withTestDatabase { uri in
                let fixture = try PostgresReadsFixture(uri: uri)
                let (_, m) = try tenMessages(fixture)
                let c = ConversationID("c")!
                var page = try fixture.reads.page(of: c, PageQuery(cursor: .around(m[5]), limit: 4))
                #expect(ids(page) == Array(m[3...6]) && page.anchor == Page.Anchor(id: m[5], found: true, index: 2))
                #expect(page.hasOlder && page.hasNewer)
                page = try fixture.reads.page(of: c, PageQuery(cursor: .around(m[5]), limit: 5))
                #expect(ids(page) == Array(m[3...7]) && page.anchor?.index == 2)
                page = try fixture.reads.page(of: c, PageQuery(cursor: .around(m[0]), limit: 4))
                #expect(ids(page) == Array(m[0...3]) && page.anchor == Page.Anchor(id: m[0], found: true, index: 0))
                #expect(!page.hasOlder && page.hasNewer)
                page = try fixture.reads.page(of: c, PageQuery(cursor: .around(m[9]), limit: 4))
                #expect(ids(page) == Array(m[6...9]) && page.anchor == Page.Anchor(id: m[9], found: true, index: 3))
                #expect(page.hasOlder && !page.hasNewer)
                page = try fixture.reads.page(of: c, PageQuery(cursor: .around(m[0]), limit: 1))
                #expect(ids(page) == [m[0]] && page.anchor?.index == 0)
                // An id of the neighbour conversation, between m4 and m5: not found.
                page = try fixture.reads.page(of: c, PageQuery(cursor: .around(m[4] + 1), limit: 4))
                #expect(ids(page) == Array(m[3...6]) && page.anchor == Page.Anchor(id: m[4] + 1, found: false, index: nil))
                page = try fixture.reads.page(of: c, PageQuery(cursor: .around(0), limit: 3))
                #expect(ids(page) == Array(m[0...2]) && page.anchor == Page.Anchor(id: 0, found: false, index: nil))
                page = try fixture.reads.page(of: c, PageQuery(cursor: .around(.max), limit: 3))
                #expect(ids(page) == Array(m[7...9]) && page.anchor == Page.Anchor(id: .max, found: false, index: nil))
            }
        }

        @Test func messagesReadBackWithEveryField() async throws {
            try await withTestDatabase { uri in
                let fixture = try PostgresReadsFixture(uri: uri)
                let seq = try fixture.conversation("c")
                let first = try fixture.append(seq, sender: "ann", body: "héllo 👋", clientID: "k1", createdAt: 5_000)
                let reply = try fixture.append(seq, sender: "bob", body: "re", replyTo: first, createdAt: 6_000)
                try fixture.edit(seq, reply, body: "re!", at: 7_000)
                let gone = try fixture.append(seq, sender: "bob", body: "oops", clientID: "k2")
                try fixture.delete(seq, gone)
                let c = ConversationID("c")!
                let reads = fixture.reads
                #expect(try reads.message(first, in: c) == Message(
                    id: first, conversationID: c, sender: "ann", body: "héllo 👋", createdAt: Timestamp(millisecondsSinceEpoch: 5_001),
                    editedAt: nil, deleted: false, replyTo: nil, clientID: "k1", version: 1))
                #expect(try reads.message(reply, in: c) == Message(
                    id: reply, conversationID: c, sender: "bob", body: "re!", createdAt: Timestamp(millisecondsSinceEpoch: 6_001),
                    editedAt: Timestamp(millisecondsSinceEpoch: 7_000), deleted: false, replyTo: first, clientID: nil, version: 3))
                let tombstone = try reads.message(gone, in: c)
                #expect(tombstone.deleted && tombstone.body == "" && tombstone.version == 5 && tombstone.clientID == "k2")
                // The page path (text copied from libpq's buffers) reads the same values.
                let page = try reads.page(of: c, PageQuery())
                #expect(page.messages == [try reads.message(first, in: c), try reads.message(reply, in: c), tombstone])
                let conversation = try reads.conversation(c)
                #expect(conversation.seq == seq)
                #expect(conversation.conversation == Conversation(
                    id: c, title: nil, createdAt: Timestamp(millisecondsSinceEpoch: 1_000), messageCount: 3,
                    oldestID: first, newestID: gone, version: 5))

                #expect(throws: StoreError.messageNotFound(c, messageID: 0)) { try reads.message(0, in: c) }
                #expect(throws: StoreError.messageNotFound(c, messageID: gone + 1)) { try reads.message(gone + 1, in: c) }
                let other = try fixture.conversation("d")
                let elsewhere = try fixture.append(other)
                #expect(throws: StoreError.messageNotFound(c, messageID: elsewhere)) { try reads.message(elsewhere, in: c) }
                let missing = ConversationID("missing")!
                #expect(throws: StoreError.conversationNotFound(missing)) { try reads.message(first, in: missing) }
                #expect(throws: StoreError.conversationNotFound(missing)) { try reads.conversation(missing) }
            }
        }

        @Test func pagesAreRangeScansOfThePrimaryKey() async throws {
            try await withTestDatabase { uri in
                let fixture = try PostgresReadsFixture(uri: uri)
                // Many small conversations with members, and one large one:
                // the plans must not depend on which conversation is read.
                let users = (0..<8).map { "user-\($0)" }
                try fixture.bulkConversations("small-", count: 3_000, users: users, messages: true)
                for index in 0..<20 {
                    let seq = try fixture.conversation("c\(index)")
                    try fixture.append(seq, count: index == 0 ? 20_000 : 200, sender: users[index % 7])
                    for user in users { try fixture.addMember(seq, user) }
                }
                let statements: [(String, String, [String])] = [
                    ("newest/before", PostgresReads.SQL.descending, ["'c0'", "\(Int64.max)", "50"]),
                    ("after/between", PostgresReads.SQL.ascending, ["'c0'", "100", "\(Int64.max)", "50"]),
                    ("around", PostgresReads.SQL.around, ["'c0'", "5000", "50"]),
                    ("after with window", PostgresReads.SQL.afterWithinWindow, ["'c0'", "100", "50", "10000"]),
                    ("members", PostgresReads.MemberSQL.page, ["'c0'", "''", "51"]),
                ]
                for (name, sql, arguments) in statements {
                    let plan = try fixture.plan(sql, arguments)
                    #expect(plan.contains("Index Scan"), "\(name): \(plan)")
                    #expect(!plan.contains("Seq Scan") && !plan.contains("Sort") && !plan.contains("Bitmap"), "\(name): \(plan)")
                }
                let changes = try fixture.plan(PostgresReads.SQL.changes, ["'c0'", "100", "1", "\(Int64.max)", "101"])
                #expect(changes.contains("messages_by_version") && !changes.contains("Sort") && !changes.contains("Seq Scan"),
                        "\(changes)")
            }
        }

        // MARK: - Changes

        @Test func theChangeFeedIsCompactedAndBounded() async throws {
            try await withTestDatabase { uri in
                let fixture = try PostgresReadsFixture(uri: uri)
                let seq = try fixture.conversation("c")
                let m = try (0..<5).map { _ in try fixture.append(seq) }      // versions 1...5
                try fixture.edit(seq, m[1], body: "e1")                        // 6
                try fixture.delete(seq, m[2])                                  // 7
                try fixture.edit(seq, m[1], body: "e2")                        // 8
                let c = ConversationID("c")!
                let reads = fixture.reads
                func summary(_ feed: ChangeFeed) -> [String] {
                    feed.events.map { "\($0.kind.rawValue) \(m.firstIndex(of: $0.message.id)!) v\($0.version)" }
                }
                var feed = try reads.changes(in: c, ChangeQuery(since: 0))
                #expect(summary(feed) == ["created 0 v1", "created 3 v4", "created 4 v5", "created 2 v7", "created 1 v8"])
                #expect(!feed.hasMore && feed.version == 8)
                feed = try reads.changes(in: c, ChangeQuery(since: 5))
                #expect(summary(feed) == ["deleted 2 v7", "edited 1 v8"] && !feed.hasMore && feed.version == 8)
                #expect(feed.events[1].message.body == "e2" && feed.events[0].message.body == "")
                feed = try reads.changes(in: c, ChangeQuery(since: 3))
                #expect(summary(feed) == ["created 3 v4", "created 4 v5", "deleted 2 v7", "edited 1 v8"])
                feed = try reads.changes(in: c, ChangeQuery(since: 5, limit: 1))
                #expect(summary(feed) == ["deleted 2 v7"] && feed.hasMore && feed.version == 7)
                feed = try reads.changes(in: c, ChangeQuery(since: 0, limit: 2))
                #expect(summary(feed) == ["created 0 v1", "created 3 v4"] && feed.hasMore && feed.version == 4)
                feed = try reads.changes(in: c, ChangeQuery(since: 0, minID: m[1], maxID: m[3]))
                #expect(summary(feed) == ["created 3 v4", "created 2 v7", "created 1 v8"] && feed.version == 8)
                feed = try reads.changes(in: c, ChangeQuery(since: 0, minID: m[4]))
                #expect(summary(feed) == ["created 4 v5"])
                feed = try reads.changes(in: c, ChangeQuery(since: 0, maxID: m[0]))
                #expect(summary(feed) == ["created 0 v1"])
                feed = try reads.changes(in: c, ChangeQuery(since: 8))
                #expect(feed.events.isEmpty && !feed.hasMore && feed.version == 8)
                #expect(throws: StoreError.versionAhead(requested: 9, current: 8)) {
                    try reads.changes(in: c, ChangeQuery(since: 9))
                }
                #expect(throws: StoreError.conversationNotFound(ConversationID("x")!)) {
                    try reads.changes(in: ConversationID("x")!, ChangeQuery(since: 0))
                }
            }
        }

        // MARK: - Members

        @Test func memberPagesWalkUserIdsByteByByte() async throws {
            try await withTestDatabase { uri in
                let fixture = try PostgresReadsFixture(uri: uri)
                let seq = try fixture.conversation("c")
                try fixture.conversation("lonely")
                for user in ["b", "B", "a", "_"] { try fixture.addMember(seq, user, role: user == "a" ? "owner" : "member", joinedAt: 42) }
                let other = try fixture.conversation("d")
                try fixture.addMember(other, "A")
                let reads = fixture.reads
                let c = ConversationID("c")!
                var page = try reads.members(of: c, after: nil, limit: 2)
                #expect(page.members.map(\.userID.rawValue) == ["B", "_"] && page.hasMore)
                #expect(page.members[0] == Member(userID: UserID("B")!, role: .member, joinedAt: Timestamp(millisecondsSinceEpoch: 42)))
                page = try reads.members(of: c, after: UserID("_")!, limit: 2)
                #expect(page.members.map(\.userID.rawValue) == ["a", "b"] && !page.hasMore && page.members[0].role == .owner)
                page = try reads.members(of: c, after: UserID("b")!, limit: 2)
                #expect(page.members.isEmpty && !page.hasMore)
                page = try reads.members(of: c, after: nil, limit: 4)
                #expect(page.members.count == 4 && !page.hasMore)
                page = try reads.members(of: ConversationID("lonely")!, after: nil, limit: 10)
                #expect(page.members.isEmpty && !page.hasMore)
                #expect(throws: StoreError.conversationNotFound(ConversationID("x")!)) {
                    try reads.members(of: ConversationID("x")!, after: nil, limit: 10)
                }

                #expect(try reads.role(of: UserID("a")!, in: c) == .owner)
                #expect(try reads.role(of: UserID("b")!, in: c) == .member)
                #expect(try reads.role(of: UserID("A")!, in: c) == nil)
                #expect(try reads.role(of: UserID("a")!, in: ConversationID("x")!) == nil)
                try fixture.bulkConversations("many-", count: 2_000, users: ["a", "b", "c"], messages: false)
                let role = try fixture.plan(PostgresReads.MemberSQL.role, ["'a'", "'c'"])
                #expect(role.contains("Index Scan using conversations_id_key") && !role.contains("Seq Scan"), "\(role)")
                #expect(role.contains("Index Scan using members_pkey") || role.contains("Index Scan using members_by_user"), "\(role)")
            }
        }
    }
}
