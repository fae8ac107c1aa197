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
    }
}
