import Foundation
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
                // Each page statement in both shapes (PostgresPageRows).
                let pages: [(String, PostgresPageRows.Statement, [String])] = [
                    ("newest/before", PostgresReads.SQL.descending, ["'c0'", "'user-1'", "\(Int64.max)", "50"]),
                    ("after/between", PostgresReads.SQL.ascending, ["'c0'", "'user-1'", "100", "\(Int64.max)", "50"]),
                    ("around", PostgresReads.SQL.around, ["'c0'", "'user-1'", "5000", "50"]),
                    ("after with window", PostgresReads.SQL.afterWithinWindow, ["'c0'", "'user-1'", "100", "50", "10000"]),
                ]
                let statements: [(String, String, [String])] = PostgresPageRows.allCases.flatMap { shape in
                    pages.map { name, statement, arguments in ("\(name) (\(shape))", statement.sql(shape), arguments) }
                } + [("members", PostgresReads.MemberSQL.page, ["'c0'", "'user-1'", "''", "51"]),
                     ("pages together", PostgresPageBatch.sql,
                      ["'{c0,c1,small-7}'", "'{user-1,\"\",user-2}'", "'{\(Int64.max),5000,100}'", "'{50,50,200}'"])]
                for (name, sql, arguments) in statements {
                    let plan = try fixture.plan(sql, arguments)
                    #expect(plan.contains("Index Scan"), "\(name): \(plan)")
                    #expect(!plan.contains("Seq Scan") && !plan.contains("Sort") && !plan.contains("Bitmap"), "\(name): \(plan)")
                }
                let changes = try fixture.plan(PostgresReads.SQL.changes, ["'c0'", "'user-1'", "100", "1", "\(Int64.max)", "101", "1001"])
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

        // MARK: - Inbox

        /// The user's conversations in inbox order, computed by a plain
        /// ORDER BY over all of them: the oracle the pages are checked against.
        private func expectedInbox(_ fixture: PostgresReadsFixture, of user: String) throws -> [String] {
            let result = try fixture.connection.query("""
                SELECT conversations.id FROM members JOIN conversations ON conversations.seq = members.conversation_seq
                WHERE members.user_id = $1 ORDER BY conversations.newest_id DESC NULLS LAST, conversations.id
                """, [.text(user)])
            return (0..<result.rowCount).map { result.string($0, 0) }
        }

        /// Every page of `user`'s inbox, `limit` rows a page, following the cursors.
        private func walkInbox(_ reads: PostgresReads, of user: String, limit: Int) throws -> [InboxPage] {
            var pages: [InboxPage] = []
            var cursor: InboxCursor?
            repeat {
                let page = try reads.inbox(of: UserID(user)!, limit: limit, after: cursor)
                pages.append(page)
                cursor = try page.nextCursor.map { try #require(InboxCursor(encoded: $0)) }
                if let next = page.nextCursor, let last = page.rows.last {
                    #expect(next == InboxCursor(last.conversation).encoded)
                }
            } while cursor != nil && pages.count < 1_000
            return pages
        }

        @Test func inboxRowsCarryTheConversationRoleLastMessageAndReadState() async throws {
            try await withTestDatabase { uri in
                let fixture = try PostgresReadsFixture(uri: uri)
                let talk = try fixture.conversation("talk", title: "Talk")
                let quiet = try fixture.conversation("quiet")
                let gone = try fixture.conversation("gone")
                let notMine = try fixture.conversation("not-mine")
                try fixture.addMember(talk, "u", role: "owner")
                try fixture.addMember(quiet, "u")
                try fixture.addMember(gone, "u")
                try fixture.addMember(talk, "v")
                let ids = try fixture.append(talk, count: 3, sender: "v")
                try fixture.markRead(talk, "u", at: ids[0])
                let tombstone = try fixture.append(gone, sender: "v", body: "bye")
                try fixture.delete(gone, tombstone)
                try fixture.append(notMine, sender: "v")
                let activity = try fixture.connection.query("SELECT value FROM activity_counter").int64(0, 0)

                let page = try fixture.reads.inbox(of: UserID("u")!, limit: 10, after: nil)
                #expect(page.rows.map(\.conversation.id.rawValue) == ["gone", "talk", "quiet"])
                #expect(page.nextCursor == nil && page.activity == activity)
                let rows = Dictionary(uniqueKeysWithValues: page.rows.map { ($0.conversation.id.rawValue, $0) })
                let c = try #require(rows["talk"])
                #expect(c.conversation == (try fixture.reads.conversation(ConversationID("talk")!).conversation))
                #expect(c.conversation.title == "Talk" && c.role == .owner)
                #expect(c.lastMessage == (try fixture.reads.message(ids[2], in: ConversationID("talk")!)))
                #expect(c.read == ReadState(lastReadID: ids[0], firstUnreadID: ids[1], unreadCount: 2, unreadCapped: false))
                let activities = try fixture.connection.query("""
                    SELECT conversations.activity, members.activity FROM conversations
                    JOIN members ON members.conversation_seq = conversations.seq AND members.user_id = 'u'
                    WHERE conversations.id = 'talk'
                    """)
                #expect(c.activity == max(activities.int64(0, 0), activities.int64(0, 1)))
                let q = try #require(rows["quiet"])
                #expect(q.lastMessage == nil && q.role == .member)
                #expect(q.read == ReadState(lastReadID: nil, firstUnreadID: nil, unreadCount: 0, unreadCapped: false))
                let g = try #require(rows["gone"])
                #expect(g.lastMessage?.deleted == true && g.lastMessage?.id == tombstone)
                #expect(g.read == ReadState(lastReadID: nil, firstUnreadID: nil, unreadCount: 0, unreadCapped: false))

                // Pages of one: the cursor steps through the same order.
                let pages = try walkInbox(fixture.reads, of: "u", limit: 1)
                #expect(pages.flatMap(\.rows).map(\.conversation.id.rawValue) == ["gone", "talk", "quiet"])
                #expect(pages.count == 3 && pages[0].nextCursor != nil && pages[2].nextCursor == nil)
                // Nobody's inbox is empty, not an error.
                let empty = try fixture.reads.inbox(of: UserID("nobody")!, limit: 10, after: nil)
                #expect(empty.rows.isEmpty && empty.nextCursor == nil && empty.activity == activity)
            }
        }

        /// A small inbox (read whole), a large one (the walk down the inbox
        /// order) and a sparse one (the walk gives up and reads them all):
        /// the same order, every conversation once, however the pages cut it.
        @Test(arguments: ["small", "large", "sparse"])
        func inboxPagesFollowTheInboxOrderWithoutRepeats(_ kind: String) async throws {
            try await withTestDatabase { uri in
                let fixture = try PostgresReadsFixture(uri: uri)
                switch kind {
                case "small":
                    try fixture.bulkConversations("a-", count: 20, users: ["u", "v"], messages: true)
                    try fixture.bulkConversations("n-", count: 50, users: ["v"], messages: true)
                    try fixture.bulkConversations("e-", count: 7, users: ["u"], messages: false)
                    try fixture.bulkConversations("b-", count: 20, users: ["u"], messages: true)
                case "large":
                    try fixture.bulkConversations("a-", count: 150, users: ["u", "v"], messages: true)
                    try fixture.bulkConversations("n-", count: 500, users: ["v"], messages: true)
                    try fixture.bulkConversations("e-", count: 40, users: ["u"], messages: false)
                    try fixture.bulkConversations("b-", count: 150, users: ["u"], messages: true)
                    try fixture.bulkConversations("f-", count: 30, users: ["v"], messages: false)
                default:
                    try fixture.bulkConversations("old-", count: 280, users: ["u"], messages: true)
                    try fixture.bulkConversations("e-", count: 10, users: ["u"], messages: false)
                    try fixture.bulkConversations("new-", count: 4_500, users: ["v"], messages: true)
                }
                let expected = try expectedInbox(fixture, of: "u")
                for limit in [1, 7, 50, 200] where limit >= 7 || kind == "small" {
                    let pages = try walkInbox(fixture.reads, of: "u", limit: limit)
                    let seen = pages.flatMap(\.rows).map(\.conversation.id.rawValue)
                    #expect(seen == expected, "limit \(limit)")
                    #expect(Set(seen).count == seen.count)
                    #expect(pages.dropLast().allSatisfy { $0.rows.count == limit && $0.nextCursor != nil })
                    #expect(pages.last?.nextCursor == nil)
                }
            }
        }

        @Test func aConversationThatMovesToTheTopIsNotRepeated() async throws {
            try await withTestDatabase { uri in
                let fixture = try PostgresReadsFixture(uri: uri)
                let seqs = try fixture.bulkConversations("c-", count: 300, users: ["u"], messages: true)
                let first = try fixture.reads.inbox(of: UserID("u")!, limit: 10, after: nil)
                #expect(first.rows.map(\.conversation.id.rawValue) == (291...300).reversed().map { "c-\($0)" })
                // c-1, last in the order, gets a message: it is now first,
                // before the cursor, and the next pages do not show it again.
                try fixture.append(seqs[0], sender: "v")
                var cursor = try #require(first.nextCursor.flatMap(InboxCursor.init(encoded:)))
                var seen = first.rows.map(\.conversation.id.rawValue)
                while true {
                    let page = try fixture.reads.inbox(of: UserID("u")!, limit: 50, after: cursor)
                    seen += page.rows.map(\.conversation.id.rawValue)
                    guard let next = page.nextCursor.flatMap(InboxCursor.init(encoded:)) else { break }
                    cursor = next
                }
                #expect(seen.count == 299 && !seen.contains("c-1") && Set(seen).count == 299)
            }
        }

        // MARK: - The user feed

        @Test(arguments: [false, true])
        func theUserFeedReportsUpdatesAndRemovalsOncePerConversation(afterManyChanges: Bool) async throws {
            try await withTestDatabase { uri in
                let fixture = try PostgresReadsFixture(uri: uri)
                let one = try fixture.conversation("one")
                let two = try fixture.conversation("two")
                let three = try fixture.conversation("three")
                let other = try fixture.conversation("other")
                for seq in [one, two, three] { try fixture.addMember(seq, "u") }
                try fixture.addMember(other, "v")
                let reads = fixture.reads
                let u = UserID("u")!
                var since = try reads.currentActivity()
                if afterManyChanges {
                    // More than 4,096 changes since `since`: the feed reads
                    // the user's memberships instead of walking the changes.
                    try fixture.connection.query("UPDATE activity_counter SET value = value + 5000")
                }
                #expect(try !reads.hasInboxChanges(of: u, after: since) || afterManyChanges == false)
                let ids = try fixture.append(one, count: 2, sender: "v")
                try fixture.append(two, sender: "v")
                try fixture.append(other, sender: "v")
                try fixture.append(one, sender: "v")
                try fixture.markRead(two, "u", at: ids[0])
                try fixture.removeMember(three, "u")
                let current = try reads.currentActivity()

                func summary(_ feed: InboxChangeFeed) -> [String] {
                    feed.events.map {
                        switch $0 {
                        case .updated(let row): "updated \(row.conversation.id.rawValue) \(row.activity)"
                        case .removed(let id, let activity): "removed \(id.rawValue) \(activity)"
                        }
                    }
                }
                var feed = try reads.inboxChanges(of: u, InboxChangeQuery(since: since))
                #expect(summary(feed) == ["updated one \(current - 2)", "updated two \(current - 1)", "removed three \(current)"])
                #expect(!feed.hasMore && feed.activity == current)
                guard case .updated(let row) = feed.events[1] else { Issue.record("not an update"); return }
                #expect(row.read.lastReadID == ids[0] && row.read.unreadCount == 1)
                feed = try reads.inboxChanges(of: u, InboxChangeQuery(since: since, limit: 2))
                #expect(summary(feed) == ["updated one \(current - 2)", "updated two \(current - 1)"])
                #expect(feed.hasMore && feed.activity == current - 1)
                feed = try reads.inboxChanges(of: u, InboxChangeQuery(since: current - 1))
                #expect(summary(feed) == ["removed three \(current)"])
                feed = try reads.inboxChanges(of: u, InboxChangeQuery(since: current))
                #expect(feed.events.isEmpty && !feed.hasMore && feed.activity == current)
                #expect(throws: StoreError.versionAhead(requested: current + 1, current: current)) {
                    try reads.inboxChanges(of: u, InboxChangeQuery(since: current + 1))
                }
                #expect(try reads.hasInboxChanges(of: u, after: since))
                #expect(try reads.hasInboxChanges(of: u, after: current - 1))
                #expect(try !reads.hasInboxChanges(of: u, after: current))
                #expect(try !reads.hasInboxChanges(of: UserID("nobody")!, after: since))

                // Back in three: the removal is gone, an update takes its place.
                try fixture.addMember(three, "u")
                since = current
                feed = try reads.inboxChanges(of: u, InboxChangeQuery(since: 0))
                #expect(feed.events.map(\.conversationID.rawValue).sorted() == ["one", "three", "two"])
                #expect(feed.events.allSatisfy { if case .updated = $0 { true } else { false } })
                #expect(feed.events.map(\.activity) == feed.events.map(\.activity).sorted())
                #expect(try reads.membershipSeqs(of: u, limit: 10).sorted() == [one, two, three])
                #expect(try reads.membershipSeqs(of: u, limit: 2).count == 2)
                #expect(try reads.membershipSeqs(of: UserID("nobody")!, limit: 10) == [])
            }
        }

        /// A user in 10,000 conversations: a page costs about a page of
        /// rows. Each inbox statement's generic plan is an index walk, and
        /// the walk down the inbox order reads what the page needs, not the
        /// user's conversations.
        @Test func inboxStatementsAreIndexWalksThatStopEarly() async throws {
            try await withTestDatabase { uri in
                let fixture = try PostgresReadsFixture(uri: uri)
                try fixture.bulkConversations("mine-", count: 10_000, users: ["u", "v"], messages: true)
                try fixture.bulkConversations("others-", count: 2_000, users: ["w"], messages: true)
                try fixture.bulkConversations("empty-", count: 500, users: ["u"], messages: false)
                // Many other users, each in a few conversations, some of them
                // having left one: what a server's statistics look like.
                let crowd = try fixture.bulkConversations("crowd-", count: 3_000, users: [], messages: true)
                try fixture.connection.query("""
                    INSERT INTO members (conversation_seq, user_id, role, joined_at)
                    SELECT seq, 'p' || (seq % 2000) || '-' || k, 'member', 0 FROM unnest($1::bigint[]) AS seq, generate_series(1, 3) AS k
                    """, [.text("{" + crowd.map(String.init).joined(separator: ",") + "}")])
                try fixture.connection.query("""
                    INSERT INTO removed_members (user_id, conversation_seq, activity)
                    SELECT 'gone' || seq, seq, 1 FROM unnest($1::bigint[]) AS seq
                    """, [.text("{" + crowd.map(String.init).joined(separator: ",") + "}")])
                let seqs = try fixture.reads.membershipSeqs(of: UserID("u")!, limit: 51)
                let array = "'{" + seqs.map(String.init).joined(separator: ",") + "}'"
                let statements: [(String, String, [String], String)] = [
                    ("count", PostgresReads.InboxSQL.activityAndMembershipCount, ["'u'", "257"], "members_by_user"),
                    ("walk", PostgresReads.InboxSQL.newestBelow, ["'u'", "\(Int64.max)", "102"], "Index Scan Backward using conversations_by_newest"),
                    ("empty walk", PostgresReads.InboxSQL.emptyAfter, ["'u'", "''", "102"], "conversations_by_newest"),
                    ("rows", PostgresReads.InboxSQL.rows, ["'u'", array, "1000", "'u'"], "messages_pkey"),
                    ("feed", PostgresReads.InboxSQL.changesByWalk, ["'u'", "12000", "4096"], "conversations_by_activity"),
                    ("wait", PostgresReads.InboxSQL.membershipSeqs, ["'u'", "5001"], "members_by_user"),
                ]
                for (name, sql, arguments, index) in statements {
                    let plan = try fixture.plan(sql, arguments)
                    #expect(plan.contains(index), "\(name): \(plan)")
                    // A sequential read of the one-row counter is its cheapest read.
                    let scans = plan.replacingOccurrences(of: "Seq Scan on activity_counter", with: "")
                    #expect(!scans.contains("Seq Scan") && !plan.contains("Sort"), "\(name): \(plan)")
                    if ["walk", "empty walk", "rows"].contains(name) {
                        // Membership is a probe per conversation, never a read
                        // of all of the user's 10,500 memberships.
                        #expect(!plan.contains("Bitmap") && !plan.contains("Hash"), "\(name): \(plan)")
                    }
                }
                // The walk for a first page of 50 (51 wanted, twice that read):
                // 102 conversations examined of the 12,500, each with one probe.
                try fixture.connection.execute(sql: "PREPARE walk AS " + PostgresReads.InboxSQL.newestBelow)
                let analyzed = try fixture.connection.execute(sql: "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) EXECUTE walk('u', \(Int64.max), 102)")
                let lines = (0..<analyzed.rowCount).map { analyzed.string($0, 0) }
                let scan = try #require(lines.first { $0.contains("Index Scan Backward using conversations_by_newest") })
                #expect(scan.contains("rows=102"), "\(lines.joined(separator: "\n"))")
                let page = try fixture.reads.inbox(of: UserID("u")!, limit: 50, after: nil)
                #expect(page.rows.count == 50 && page.rows.first?.conversation.id.rawValue == "mine-10000")
            }
        }

        /// The inbox reads open their own read-only snapshot and end it; on
        /// a connection already in a transaction they neither commit nor
        /// end the caller's.
        @Test func inboxReadsOwnTheirSnapshotButNotTheCallersTransaction() async throws {
            try await withTestDatabase { uri in
                let fixture = try PostgresReadsFixture(uri: uri)
                let seq = try fixture.conversation("c")
                try fixture.addMember(seq, "u")
                let reads = fixture.reads
                let u = UserID("u")!
                _ = try reads.inbox(of: u, limit: 5, after: nil)
                _ = try reads.inboxChanges(of: u, InboxChangeQuery(since: 0))
                #expect(fixture.connection.transactionStatus == .idle)

                try fixture.connection.execute(sql: "BEGIN")
                try fixture.connection.query("INSERT INTO conversations (id, created_at) VALUES ('uncommitted', 0)")
                #expect(try reads.inbox(of: u, limit: 5, after: nil).rows.count == 1)
                #expect(try reads.hasInboxChanges(of: u, after: 0))
                #expect(fixture.connection.transactionStatus == .inTransaction)
                try fixture.connection.execute(sql: "ROLLBACK")
                #expect(throws: StoreError.conversationNotFound(ConversationID("uncommitted")!)) {
                    try reads.conversation(ConversationID("uncommitted")!)
                }

                // A failed statement inside the snapshot ends it too.
                try fixture.connection.execute(sql: "DROP TABLE removed_members")
                #expect(throws: StoreError.self) { try reads.inboxChanges(of: u, InboxChangeQuery(since: 0)) }
                #expect(fixture.connection.transactionStatus == .idle)
            }
        }
    }
}
