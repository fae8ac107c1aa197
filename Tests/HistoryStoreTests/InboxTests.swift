import CSQLite
import Foundation
import HistoryTestSupport
import Testing
@testable import HistoryStore
@testable import HistorySQLite

func uid(_ text: String) -> UserID {
    UserID(text)!
}

extension HistoryStore {
    /// Creates a conversation named `id` with `owner` as its first member.
    @discardableResult
    func make(_ id: String, owner: String) async throws -> Conversation {
        try await createConversation(id: cid(id), title: nil, owner: uid(owner))
    }

    /// Every row of the user's inbox, read in keyset pages of `limit`;
    /// records an issue when a conversation comes twice.
    func wholeInbox(of user: String, limit: Int) throws -> [InboxRow] {
        var rows: [InboxRow] = []
        var cursor: String?
        var seen = Set<ConversationID>()
        repeat {
            let page = try inbox(of: uid(user), InboxQuery(cursor: cursor, limit: limit))
            #expect(page.rows.count <= limit)
            #expect(page.nextCursor == nil || page.rows.count == limit, "a page before the last is full")
            for row in page.rows {
                #expect(seen.insert(row.conversation.id).inserted, "\(row.conversation.id) repeated")
            }
            rows += page.rows
            cursor = page.nextCursor
        } while cursor != nil
        return rows
    }

    /// Every event of the user feed after `since`, read in pages of `limit`;
    /// returns them with the `since` of the next call.
    func wholeFeed(of user: String, since: Int64, limit: Int) throws -> (events: [InboxEvent], activity: Int64) {
        var events: [InboxEvent] = []
        var since = since
        while true {
            let feed = try inboxChanges(of: uid(user), InboxChangeQuery(since: since, limit: limit))
            #expect(feed.events.count <= limit)
            #expect(!feed.hasMore || feed.events.count == limit)
            #expect(zip(feed.events, feed.events.dropFirst()).allSatisfy { $0.activity < $1.activity }, "ascending")
            #expect(feed.events.allSatisfy { $0.activity > since && $0.activity <= feed.activity })
            events += feed.events
            since = feed.activity
            if !feed.hasMore { return (events, since) }
        }
    }
}

@Suite("Inbox", .postgresCluster)
struct InboxTests {
    // MARK: - Read markers

    @Test(arguments: StoreBackend.allCases) func markersMoveForwardOnlyAndClampToTheNewestMessage(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("room", owner: "ana")
            // No messages: nothing to read, the marker stays nil.
            #expect(try await store.markRead(uid("ana"), in: cid("room"), upTo: 5)
                == ReadState(lastReadID: nil, firstUnreadID: nil, unreadCount: 0, unreadCapped: false))
            let posted = try await store.post(4, to: "room", sender: "bob").map(\.id)
            let moved = try await store.markRead(uid("ana"), in: cid("room"), upTo: posted[1])
            #expect(moved == ReadState(lastReadID: posted[1], firstUnreadID: posted[2], unreadCount: 2, unreadCapped: false))
            let activity = try store.inbox(of: uid("ana"), InboxQuery()).activity
            // Back, or to where it is: nothing written, the current state answered.
            #expect(try await store.markRead(uid("ana"), in: cid("room"), upTo: posted[0]) == moved)
            #expect(try await store.markRead(uid("ana"), in: cid("room"), upTo: posted[1]) == moved)
            #expect(try store.inbox(of: uid("ana"), InboxQuery()).activity == activity, "a marker that did not move takes no value")
            // Past the newest: the newest.
            let clamped = try await store.markRead(uid("ana"), in: cid("room"), upTo: Int64.max)
            #expect(clamped == ReadState(lastReadID: posted[3], firstUnreadID: nil, unreadCount: 0, unreadCapped: false))
            #expect(try store.inbox(of: uid("ana"), InboxQuery()).rows.first?.read == clamped)
        }
    }

    @Test(arguments: StoreBackend.allCases) func markReadFailsClearly(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("room", owner: "ana")
            await #expect(throws: StoreError.memberNotFound(cid("room"), uid("bob"))) {
                try await store.markRead(uid("bob"), in: cid("room"), upTo: 1)
            }
            await #expect(throws: StoreError.conversationNotFound(cid("nowhere"))) {
                try await store.markRead(uid("ana"), in: cid("nowhere"), upTo: 1)
            }
            do {
                _ = try await store.markRead(uid("ana"), in: cid("room"), upTo: -1)
                Issue.record("a negative id was accepted")
            } catch let error as StoreError {
                guard case .invalid(let field, _) = error else { Issue.record("\(error)"); return }
                #expect(field == .lastReadID)
            }
        }
    }

    // MARK: - Unread counts

    @Test(arguments: StoreBackend.allCases) func unreadCountsSkipTombstonesAndOwnMessagesAndCapAt999(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("exact", owner: "ana")
            try await store.make("capped", owner: "ana")
            let exact = try store.seed(999, to: "exact")
            let capped = try store.seed(1000, to: "capped")
            var rows = Dictionary(uniqueKeysWithValues: try store.wholeInbox(of: "ana", limit: 50).map { ($0.conversation.id, $0.read) })
            #expect(rows[cid("exact")] == ReadState(lastReadID: nil, firstUnreadID: exact[0], unreadCount: 999, unreadCapped: false))
            #expect(rows[cid("capped")] == ReadState(lastReadID: nil, firstUnreadID: capped[0], unreadCount: 999, unreadCapped: true))

            // One deleted and one of ana's own: both under the count again.
            _ = try await store.delete(messageID: capped[0], in: cid("capped"))
            #expect(try store.inbox(of: uid("ana"), InboxQuery()).rows.first { $0.conversation.id == cid("capped") }?.read
                == ReadState(lastReadID: nil, firstUnreadID: capped[1], unreadCount: 999, unreadCapped: false))
            try await store.post(1, to: "exact", sender: "ana")
            rows = Dictionary(uniqueKeysWithValues: try store.wholeInbox(of: "ana", limit: 1).map { ($0.conversation.id, $0.read) })
            #expect(rows[cid("exact")]?.unreadCount == 999 && rows[cid("exact")]?.unreadCapped == false)
            let read = try await store.markRead(uid("ana"), in: cid("exact"), upTo: exact[500])
            #expect(read == ReadState(lastReadID: exact[500], firstUnreadID: exact[501], unreadCount: 498, unreadCapped: false))
        }
    }

    // MARK: - Pages

    @Test(arguments: StoreBackend.allCases) func pagesFollowTheNewestMessageThenEmptyConversationsById(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            for name in ["e2", "a", "b", "e1", "c"] {
                try await store.make(name, owner: "ana")
            }
            try await store.make("not-hers")
            try await store.post(1, to: "b")
            try await store.post(1, to: "a")
            try await store.post(1, to: "c")
            let tombstone = try await store.post(1, to: "b")[0]
            _ = try await store.delete(messageID: tombstone.id, in: cid("b"))
            try await store.post(1, to: "not-hers")
            for limit in 1...6 {
                let rows = try store.wholeInbox(of: "ana", limit: limit)
                #expect(rows.map(\.conversation.id.rawValue) == ["b", "c", "a", "e1", "e2"], "limit \(limit)")
                #expect(rows[0].lastMessage?.id == tombstone.id && rows[0].lastMessage?.deleted == true,
                        "the newest message, tombstone or not")
                #expect(rows[3].lastMessage == nil)
                #expect(rows.allSatisfy { $0.role == .owner })
            }
            #expect(try store.wholeInbox(of: "nobody", limit: 10).isEmpty)
        }
    }

    @Test(arguments: StoreBackend.allCases) func aConversationMovingToTheTopIsNotRepeated(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            for name in ["a", "b", "c", "d"] {
                try await store.make(name, owner: "ana")
                try await store.post(1, to: name)
            }
            let first = try store.inbox(of: uid("ana"), InboxQuery(limit: 2))
            #expect(first.rows.map(\.conversation.id.rawValue) == ["d", "c"])
            try await store.post(1, to: "d")
            try await store.post(1, to: "a")
            let second = try store.inbox(of: uid("ana"), InboxQuery(cursor: first.nextCursor, limit: 2))
            #expect(second.rows.map(\.conversation.id.rawValue) == ["b"], "a moved above the cursor, d stays above it")
            #expect(second.nextCursor == nil)
        }
    }

    @Test(arguments: StoreBackend.allCases) func badQueriesAreRefused(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            for cursor in ["", "x", "bTo=", "bTow", "bTotMQ", "ZTpub3Qgb2theSE", "ZTo", String(repeating: "A", count: 300)] {
                do {
                    _ = try store.inbox(of: uid("ana"), InboxQuery(cursor: cursor))
                    Issue.record("cursor '\(cursor)' was accepted")
                } catch let error as StoreError {
                    #expect(error == .invalid(field: .cursor, reason: "must be a next_cursor of an earlier page"), "\(cursor)")
                }
            }
            #expect(InboxCursor(encoded: InboxCursor.message(newestID: 42).encoded) == .message(newestID: 42))
            #expect(InboxCursor(encoded: InboxCursor.empty(cid("a-b_c")).encoded) == .empty(cid("a-b_c")))
            for limit in [0, 201] {
                #expect(throws: StoreError.self) { try store.inbox(of: uid("ana"), InboxQuery(limit: limit)) }
            }
            for limit in [0, 1001] {
                #expect(throws: StoreError.self) { try store.inboxChanges(of: uid("ana"), InboxChangeQuery(limit: limit)) }
            }
            #expect(throws: StoreError.self) { try store.inboxChanges(of: uid("ana"), InboxChangeQuery(since: -1)) }
            try await store.make("c")
            let current = try store.inboxChanges(of: uid("ana"), InboxChangeQuery()).activity
            #expect(current >= 1)
            #expect(throws: StoreError.versionAhead(requested: current + 1, current: current)) {
                try store.inboxChanges(of: uid("ana"), InboxChangeQuery(since: current + 1))
            }
        }
    }

    /// More than 256 conversations: pages walk the inbox order and probe
    /// memberships; with the user's conversations rare among the recent
    /// ones the walk gives up and reads the memberships. Both must page
    /// exactly like the small path.
    @Test(arguments: StoreBackend.allCases) func aUserWithManyConversationsPagesTheSame(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            var expected: [String] = []
            for index in 0..<300 {
                let name = String(format: "big%03d", index)
                try await store.make(name, owner: "ana")
                if index % 3 == 0 { try await store.post(1, to: name) }
            }
            expected = (0..<300).filter { $0 % 3 == 0 }.reversed().map { String(format: "big%03d", $0) }
                + (0..<300).filter { $0 % 3 != 0 }.map { String(format: "big%03d", $0) }
            for limit in [1, 7, 50, 200] {
                #expect(try store.wholeInbox(of: "ana", limit: limit).map(\.conversation.id.rawValue) == expected, "\(limit)")
            }
            // 4,200 newer conversations that are not hers: the walk's budget
            // (4,096 rows for a small page) runs out before it finds her first.
            await withTaskGroup(of: Void.self) { group in
                for worker in 0..<8 {
                    group.addTask {
                        for index in stride(from: worker, to: 4200, by: 8) {
                            let id = ConversationID("other\(index)")!
                            _ = try? await store.createConversation(id: id)
                            _ = try? await store.append(NewMessage(sender: "bob", body: "x"), to: id)
                        }
                    }
                }
            }
            #expect(try store.wholeInbox(of: "ana", limit: 3).map(\.conversation.id.rawValue) == expected)
            try await store.post(1, to: "big001")
            let top = try store.inbox(of: uid("ana"), InboxQuery(limit: 2))
            #expect(top.rows.map(\.conversation.id.rawValue) == ["big001", "big297"])
        }
    }

    /// A user once seen with a large inbox is remembered as one (its
    /// memberships are not counted again); after leaving most of its
    /// conversations it is still served exactly its own.
    @Test func aLargeInboxThatShrinksIsStillServedRightly() async throws {
        try await withTemporaryStore { store in
            let names = (0..<(InboxWalk.smallInbox + 10)).map { String(format: "c%03d", $0) }
            for name in names {
                try await store.make(name, owner: "ana")
                try await store.post(1, to: name)
            }
            #expect(try store.wholeInbox(of: "ana", limit: 50).count == names.count)
            let kept = Set(names.suffix(3) + names.prefix(2))
            for name in names where !kept.contains(name) {
                #expect(try await store.removeMember(uid("ana"), from: cid(name)))
            }
            let newestFirst = names.reversed().filter(kept.contains)
            for limit in [1, 2, 50] {
                #expect(try store.wholeInbox(of: "ana", limit: limit).map(\.conversation.id.rawValue) == newestFirst, "\(limit)")
            }
        }
    }

    // MARK: - The user feed

    @Test(arguments: StoreBackend.allCases) func theFeedIsCompactedAndSaysRemoved(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("one", owner: "ana")
            try await store.make("two", owner: "ana")
            try await store.make("left", owner: "ana")
            try await store.make("other")
            let start = try store.inbox(of: uid("ana"), InboxQuery()).activity
            #expect(try store.wholeFeed(of: "ana", since: start, limit: 10).events.isEmpty)

            try await store.post(3, to: "two", sender: "bob")
            try await store.post(2, to: "one", sender: "bob")
            let last = try await store.post(1, to: "two", sender: "bob")[0]
            try await store.post(5, to: "other", sender: "bob")
            try await store.post(1, to: "left", sender: "bob")
            #expect(try await store.removeMember(uid("ana"), from: cid("left")))
            let (events, activity) = try store.wholeFeed(of: "ana", since: start, limit: 10)
            #expect(events.map(\.conversationID.rawValue) == ["one", "two", "left"])
            guard case .updated(let two) = events[1], case .removed(_, let removedAt) = events[2] else {
                Issue.record("\(events)"); return
            }
            #expect(two.lastMessage == last)
            #expect(two.read.unreadCount == 4)
            #expect(removedAt == activity, "the removal was the last change")
            // Pages of one give the same events.
            #expect(try store.wholeFeed(of: "ana", since: start, limit: 1).events == events)
            #expect(try store.wholeFeed(of: "ana", since: activity, limit: 10).events.isEmpty)
            // Joining again replaces the removal.
            try await store.putMember(uid("ana"), in: cid("left"))
            let rejoined = try store.wholeFeed(of: "ana", since: start, limit: 10).events
            #expect(rejoined.map(\.conversationID.rawValue) == ["one", "two", "left"])
            guard case .updated(let row) = rejoined.last else { Issue.record("\(rejoined)"); return }
            #expect(row.role == .member && row.read.lastReadID == nil && row.read.unreadCount == 1)
            // A marker move shows for its user only; another member's marker does not.
            try await store.putMember(uid("bob"), in: cid("one"))
            let since = try store.inbox(of: uid("ana"), InboxQuery()).activity
            _ = try await store.markRead(uid("bob"), in: cid("one"), upTo: .max)
            #expect(try store.wholeFeed(of: "ana", since: since, limit: 10).events.isEmpty)
            #expect(try store.wholeFeed(of: "bob", since: since, limit: 10).events.map(\.conversationID) == [cid("one")])
        }
    }

    /// The feed of a user whose `since` is far behind reads its memberships
    /// instead of walking every change since: the same answer.
    @Test(arguments: StoreBackend.allCases) func aFeedFarBehindReadsTheSame(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("mine", owner: "ana")
            try await store.make("busy")
            let start = try store.inbox(of: uid("ana"), InboxQuery()).activity
            try await store.post(1, to: "mine")
            try store.seed(5000, to: "busy")
            let (events, _) = try store.wholeFeed(of: "ana", since: start, limit: 10)
            #expect(events.map(\.conversationID) == [cid("mine")])
            let near = try store.wholeFeed(of: "ana", since: start + 1, limit: 10).events
            #expect(near.isEmpty, "the post took start + 1")
        }
    }

    /// The feed walks the changes since A when they are fewer than the
    /// user's memberships, and reads the memberships when they are fewer:
    /// the same answer either way, removals and markers included.
    @Test func theFeedReadsWhicheverIsFewerChangesOrMemberships() async throws {
        try await withTemporaryStore { store in
            for index in 0..<6 { try await store.make("hers\(index)", owner: "ana") }
            for index in 0..<12 { try await store.make("other\(index)") }
            let start = try store.inbox(of: uid("ana"), InboxQuery()).activity
            try await store.post(1, to: "hers4", sender: "bob")
            try await store.post(1, to: "other0", sender: "bob")
            let read = try await store.post(1, to: "hers1", sender: "bob")[0]
            // Three changes, six memberships: the walk.
            var events = try store.wholeFeed(of: "ana", since: start, limit: 10).events
            #expect(events.map(\.conversationID.rawValue) == ["hers4", "hers1"])

            for index in 0..<12 { try await store.post(1, to: "other\(index)", sender: "bob") }
            _ = try await store.markRead(uid("ana"), in: cid("hers1"), upTo: read.id)
            #expect(try await store.removeMember(uid("ana"), from: cid("hers2")))
            // Sixteen changes, five memberships: the memberships.
            events = try store.wholeFeed(of: "ana", since: start, limit: 10).events
            #expect(events.map(\.conversationID.rawValue) == ["hers4", "hers1", "hers2"])
            guard case .updated(let marked) = events[1], case .removed = events[2] else { Issue.record("\(events)"); return }
            #expect(marked.read.lastReadID == read.id && marked.read.unreadCount == 0)
            // Both ways agree from every point in between.
            let end = try store.inbox(of: uid("ana"), InboxQuery()).activity
            for since in start...end {
                let expected = events.filter { $0.activity > since }
                #expect(try store.wholeFeed(of: "ana", since: since, limit: 10).events == expected, "since \(since)")
            }
        }
    }

    // MARK: - Costs

    /// Fan-out on read: a post to a conversation with 1,000 members writes
    /// exactly as many rows as one to a conversation with 2.
    @Test func aPostWritesTheSameRowsWhateverTheMemberCount() async throws {
        try await withTemporaryStore { store in
            try await store.make("pair", owner: "ana")
            try await store.putMember(uid("bob"), in: cid("pair"))
            try await store.make("crowd", owner: "ana")
            for index in 0..<999 { try await store.putMember(uid("user\(index)"), in: cid("crowd")) }
            func rowsWritten(by body: () async throws -> Void) async throws -> Int64 {
                let before = store.withWriterConnection { $0.totalChanges }
                try await body()
                return store.withWriterConnection { $0.totalChanges } - before
            }
            let toPair = try await rowsWritten { try await store.post(1, to: "pair") }
            let toCrowd = try await rowsWritten { try await store.post(1, to: "crowd") }
            #expect(toPair == toCrowd)
            #expect(toPair == 4, "the message, its conversation, the activity counter, its change_log row")
        }
    }

    @Test func theInboxQueriesUseTheirIndexes() async throws {
        try await withTemporaryStore { store in
            try await store.make("room", owner: "ana")
            let connection = try SQLiteConnection(path: store.configuration.path)
            defer { connection.close() }
            func plan(_ sql: String) throws -> [String] {
                try connection.makeStatement(sql: "EXPLAIN QUERY PLAN " + sql).rows { $0.string(3) }
            }
            let expectations: [(sql: String, uses: String)] = [
                (SQLiteReads.InboxSQL.memberships, "members USING INDEX members_by_user (user_id=?)"),
                (SQLiteReads.InboxSQL.membershipBySeq, "members USING PRIMARY KEY (conversation_seq=? AND user_id=?)"),
                (SQLiteReads.InboxSQL.isMember, "members USING COVERING INDEX members_by_user (user_id=? AND conversation_seq=?)"),
                (SQLiteReads.InboxSQL.newestRangeBelow, "conversations USING COVERING INDEX conversations_by_newest (newest_id<?)"),
                (SQLiteReads.InboxSQL.membershipsInRange, "conversations USING INDEX conversations_by_newest (newest_id>? AND newest_id<?)"),
                (SQLiteReads.InboxSQL.membershipsInRange, "members USING PRIMARY KEY (conversation_seq=? AND user_id=?)"),
                (SQLiteReads.InboxSQL.emptyAfter, "conversations USING COVERING INDEX conversations_by_newest (newest_id=? AND id>?)"),
                (SQLiteReads.InboxSQL.lastMessage, "messages USING INTEGER PRIMARY KEY (rowid=?)"),
                (SQLiteReads.InboxSQL.conversationsChangedAfter, "conversations USING COVERING INDEX conversations_by_activity (activity>?)"),
                (SQLiteReads.InboxSQL.membershipsChangedAfter, "members USING COVERING INDEX members_by_user (user_id=?)"),
                (SQLiteReads.InboxSQL.memberRowsChangedAfter, "members USING COVERING INDEX members_by_user_activity (user_id=? AND activity>?)"),
                (SQLiteReads.InboxSQL.removedAfter, "removed_members USING COVERING INDEX removed_members_by_user_activity (user_id=? AND activity>?)"),
                (SQLiteReads.InboxSQL.membershipSeqs, "members USING COVERING INDEX members_by_user (user_id=?)"),
                (SQLiteReads.InboxSQL.membershipCount, "members USING COVERING INDEX members_by_user (user_id=?)"),
                (UnreadScan.sql, "messages USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)"),
            ]
            for (sql, uses) in expectations {
                let steps = try plan(sql)
                #expect(steps.contains { $0.contains(uses) }, "\(sql): \(steps)")
                // "SCAN (subquery-1)" reads the bounded scan's own result, not a table.
                #expect(!steps.contains { $0.hasPrefix("SCAN ") && !$0.contains("subquery") }, "\(sql): \(steps)")
                #expect(!steps.contains { $0.contains("TEMP B-TREE") }, "\(sql): \(steps)")
                #expect(!sql.uppercased().contains("OFFSET"))
            }
        }
    }

    // MARK: - Migration

    /// A file at schema 4 with conversations, messages and members gains
    /// the inbox: activity backfilled in creation order, markers nil (so
    /// everything is unread), and the counter past every backfilled value.
    @Test func aDatabaseAtSchemaFourGainsTheInbox() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.databasePath
            let bundled = try Migration.bundled()
            #expect(bundled.map(\.label)[4] == "0005_inbox")
            let connection = try SQLiteConnection(path: path)
            _ = try SQLiteMigrator(migrations: Array(bundled.prefix(4))).migrate(connection)
            try connection.execute(sql: """
                INSERT INTO conversations (seq, id, title, created_at, message_count, oldest_id, newest_id, version)
                VALUES (1, 'first', NULL, 0, 2, 1, 2, 2), (2, 'second', NULL, 0, 1, 3, 3, 1), (3, 'empty', NULL, 0, 0, NULL, NULL, 0);
                INSERT INTO messages (place, sender, body, created_at, created_version, version)
                VALUES (68719476737, 'bob', 'one', 0, 1, 1), (68719476738, 'ana', 'two', 0, 2, 2),
                       (137438953475, 'bob', 'three', 0, 1, 1);
                INSERT INTO members (conversation_seq, user_id, role, joined_at)
                VALUES (1, 'ana', 'owner', 0), (2, 'ana', 'member', 0), (3, 'ana', 'member', 0), (1, 'bob', 'member', 0);
                """)
            connection.close()

            let store = try SQLiteHistoryStore(configuration: SQLiteStoreConfiguration(path: path, durability: .normal))
            defer { store.close() }
            #expect(try queryStrings(path, "SELECT activity FROM conversations ORDER BY seq") == ["1", "2", "3"])
            let page = try store.inbox(of: uid("ana"), InboxQuery())
            #expect(page.activity == 3)
            #expect(page.rows.map(\.conversation.id.rawValue) == ["second", "first", "empty"])
            #expect(page.rows.map(\.activity) == [2, 1, 3])
            #expect(page.rows.map(\.read) == [
                ReadState(lastReadID: nil, firstUnreadID: 3, unreadCount: 1, unreadCapped: false),
                ReadState(lastReadID: nil, firstUnreadID: 1, unreadCount: 1, unreadCapped: false),
                ReadState(lastReadID: nil, firstUnreadID: nil, unreadCount: 0, unreadCapped: false),
            ])
            #expect(page.rows[1].lastMessage?.body == "two")
            let feed = try store.inboxChanges(of: uid("ana"), InboxChangeQuery(since: 1))
            #expect(feed.events.map(\.conversationID.rawValue) == ["second", "empty"])
            // The next change numbers after the backfill.
            try await store.post(1, to: "first", sender: "bob")
            #expect(try store.inboxChanges(of: uid("ana"), InboxChangeQuery(since: 3)).events.map(\.activity) == [4])
        }
    }
}
