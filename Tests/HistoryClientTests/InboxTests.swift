import HistoryClient
import Testing

/// Each rule of Inbox's policy, against a simulated inbox.
@Suite("Inbox rules")
struct InboxTests {
    /// An inbox model with `count` conversations the user is in, each with
    /// one message from ana, the last created on top.
    static func harness(pageSize: Int = 3, capacity: Int? = nil, conversations count: Int) -> InboxHarness {
        var harness = InboxHarness(pageSize: pageSize, capacity: capacity)
        for _ in 0..<count {
            let id = harness.model.createConversation()
            harness.model.post(in: id, sender: "ana")
        }
        return harness
    }

    @Test func opensOnTheTopPageMostRecentFirst() {
        var harness = Self.harness(conversations: 7)
        #expect(harness.inbox.nextRequest(for: .open) == InboxRequest(cursor: nil, limit: 3))
        let changes = harness.perform(.open)
        #expect(changes == [.inserted(conversationID: "c007", at: 0), .inserted(conversationID: "c006", at: 1),
                            .inserted(conversationID: "c005", at: 2)])
        #expect(harness.ids == ["c007", "c006", "c005"])
        #expect(harness.inbox.hasMore)
        #expect(harness.inbox.activity == harness.model.activity)
        #expect(harness.inbox.rows.first?.read.unreadCount == 1)
        // Loaded: the feed keeps it current, opening again asks for nothing.
        #expect(harness.inbox.nextRequest(for: .open) == nil)
    }

    @Test func scrollingDownAppendsUntilTheEnd() {
        var harness = Self.harness(conversations: 7)
        harness.perform(.open)
        #expect(harness.inbox.nextRequest(for: .scrollDown)?.cursor != nil)
        #expect(harness.perform(.scrollDown) == [.inserted(conversationID: "c004", at: 3),
                                                 .inserted(conversationID: "c003", at: 4),
                                                 .inserted(conversationID: "c002", at: 5)])
        harness.perform(.scrollDown)
        #expect(harness.ids == ["c007", "c006", "c005", "c004", "c003", "c002", "c001"])
        #expect(!harness.inbox.hasMore)
        #expect(harness.inbox.nextRequest(for: .scrollDown) == nil)
    }

    @Test func conversationsWithoutMessagesComeLastByID() {
        var harness = InboxHarness(pageSize: 10)
        let empty = harness.model.createConversation()
        let emptyToo = harness.model.createConversation()
        let busy = harness.model.createConversation()
        harness.model.post(in: busy, sender: "ana")
        harness.perform(.open)
        #expect(harness.ids == [busy, empty, emptyToo])
        // A first message moves an empty conversation up.
        harness.model.post(in: emptyToo, sender: "bob")
        #expect(harness.deliverEvents() == [.moved(conversationID: emptyToo, from: 2, to: 0)])
        #expect(harness.ids == [emptyToo, busy, empty])
    }

    @Test func aNewMessageMovesTheRowToTheTop() {
        var harness = Self.harness(conversations: 5)
        harness.perform(.open)
        harness.model.post(in: "c004", sender: "bob")
        #expect(harness.deliverEvents() == [.moved(conversationID: "c004", from: 1, to: 0)])
        #expect(harness.ids == ["c004", "c005", "c003"])
        #expect(harness.inbox.rows[0].read.unreadCount == 2)
        #expect(harness.inbox.rows[0].lastMessage?.sender == "bob")
    }

    @Test func anEditOrAMarkerUpdatesInPlace() {
        var harness = Self.harness(conversations: 3)
        harness.perform(.open)
        harness.model.edit(in: "c002", at: 0)
        #expect(harness.deliverEvents() == [.updated(conversationID: "c002", at: 1)])
        let newest = harness.model.conversations["c003"]!.messages.last!.id
        harness.model.markRead(in: "c003", upTo: newest)
        #expect(harness.deliverEvents() == [.updated(conversationID: "c003", at: 0)])
        #expect(harness.inbox.rows[0].read == HistoryReadState(lastReadID: newest, firstUnreadID: nil,
                                                                unreadCount: 0, unreadCapped: false))
    }

    @Test func aConversationFromBelowThatComesAliveIsInsertedAtTheTop() {
        var harness = Self.harness(conversations: 6)
        harness.perform(.open)
        harness.model.post(in: "c001", sender: "ana")
        #expect(harness.deliverEvents() == [.inserted(conversationID: "c001", at: 0)])
        #expect(harness.ids == ["c001", "c006", "c005", "c004"])
        // Below the loaded part, a change waits for scrolling.
        harness.model.edit(in: "c002", at: 0)
        #expect(harness.deliverEvents() == [])
        harness.perform(.scrollDown)
        #expect(harness.ids == ["c001", "c006", "c005", "c004", "c003", "c002"])
        #expect(harness.inbox.row(for: "c002") == harness.model.row("c002"))
    }

    @Test func aNewMembershipAppearsWhereItBelongs() {
        var harness = Self.harness(pageSize: 10, conversations: 2)
        harness.perform(.open)
        let joined = harness.model.createConversation(member: false)
        harness.model.post(in: joined, sender: "ana")
        harness.model.join(joined)
        #expect(harness.deliverEvents() == [.inserted(conversationID: joined, at: 0)])
        harness.model.leave("c001")
        #expect(harness.deliverEvents() == [.removed(conversationID: "c001", from: 2)])
        #expect(harness.ids == [joined, "c002"])
    }

    @Test func rowsPushedPastCapacityAreDroppedAndFetchedAgain() {
        var harness = Self.harness(pageSize: 2, capacity: 4, conversations: 8)
        harness.perform(.open)
        harness.perform(.scrollDown)
        #expect(harness.ids == ["c008", "c007", "c006", "c005"])
        #expect(harness.inbox.isAtCapacity)
        #expect(harness.inbox.nextRequest(for: .scrollDown) == nil)
        harness.model.post(in: "c001", sender: "ana")
        #expect(harness.deliverEvents() == [.inserted(conversationID: "c001", at: 0),
                                            .removed(conversationID: "c005", from: 4)])
        harness.model.leave("c007")
        harness.model.leave("c006")
        harness.deliverEvents()
        #expect(harness.ids == ["c001", "c008"])
        // Paging resumes from a kept cursor and brings c005 back.
        harness.perform(.scrollDown)
        #expect(harness.ids == ["c001", "c008", "c005", "c004"])
        #expect(harness.inbox.rows == Array(harness.model.sortedRows.prefix(4)))
    }

    @Test func whenEveryCursorIsPastTheBoundPagingStartsAgainFromTheTop() {
        var harness = Self.harness(pageSize: 2, capacity: 3, conversations: 6)
        harness.perform(.open)
        harness.perform(.scrollDown)
        #expect(harness.ids == ["c006", "c005", "c004"])
        for id in ["c001", "c002"] { harness.model.post(in: id, sender: "ana") }
        harness.deliverEvents()
        #expect(harness.ids == ["c002", "c001", "c006"])
        for id in ["c002", "c001"] { harness.model.leave(id) }
        harness.deliverEvents()
        #expect(harness.ids == ["c006"])
        // The first page's cursor lay below the rows kept: from the top again.
        #expect(harness.inbox.nextRequest(for: .scrollDown)?.cursor == nil)
        var requests = 0
        while harness.inbox.nextRequest(for: .scrollDown) != nil, requests < 10 {
            harness.perform(.scrollDown)
            requests += 1
        }
        #expect(harness.ids == ["c006", "c005", "c004"])
    }

    @Test func aPageWhoseCursorWasDroppedChangesNothing() {
        var harness = Self.harness(pageSize: 2, capacity: 2, conversations: 5)
        harness.perform(.open)
        harness.model.leave("c005")
        harness.deliverEvents()
        let request = harness.inbox.nextRequest(for: .scrollDown)!
        let page = harness.model.page(cursor: request.cursor, limit: request.limit)
        harness.model.post(in: "c001", sender: "ana")
        harness.model.post(in: "c002", sender: "ana")
        harness.deliverEvents()
        #expect(harness.ids == ["c002", "c001"])
        #expect(harness.deliver(page, for: request) == [])
        #expect(harness.ids == ["c002", "c001"])
    }

    @Test func aPageReadBeforeTheFeedIsRefreshed() {
        var harness = Self.harness(pageSize: 2, conversations: 4)
        harness.perform(.open)
        let request = harness.inbox.nextRequest(for: .scrollDown)!
        let stale = harness.model.page(cursor: request.cursor, limit: request.limit)
        // While the page is in flight, c002 is left and c001 edited; the feed says so first.
        harness.model.leave("c002")
        harness.model.edit(in: "c001", at: 0)
        #expect(harness.deliverEvents() == [])
        var inbox = harness.inbox
        _ = inbox.apply(stale, for: request)
        #expect(inbox.pendingRefresh == stale.activity)
        #expect(inbox.rows.map(\.conversation.id) == ["c004", "c003", "c002", "c001"])
        harness.deliver(stale, for: request)
        #expect(harness.ids == ["c004", "c003", "c001"])
        #expect(harness.inbox.rows == harness.model.sortedRows)
        #expect(harness.inbox.pendingRefresh == nil)
    }

    @Test func changesReplayOntoAnArrayOfIDs() {
        var ids = ["a", "b", "c", "d"]
        InboxChange.moved(conversationID: "c", from: 2, to: 0).apply(to: &ids)
        #expect(ids == ["c", "a", "b", "d"])
        InboxChange.removed(conversationID: "a", from: 1).apply(to: &ids)
        InboxChange.inserted(conversationID: "e", at: 3).apply(to: &ids)
        InboxChange.updated(conversationID: "b", at: 1).apply(to: &ids)
        #expect(ids == ["c", "b", "d", "e"])
    }

    @Test func configurationClampsItsNumbers() {
        #expect(InboxConfiguration(pageSize: 0).pageSize == 1)
        #expect(InboxConfiguration(pageSize: 500).pageSize == 200)
        #expect(InboxConfiguration(pageSize: 10, capacity: 3).capacity == 10)
        #expect(InboxConfiguration().capacity == 1_000)
    }
}
