import HistoryClient
import Testing

/// Pages and events race: a page is read at one version while the live feed
/// keeps delivering. Whatever the order, the window ends up holding each
/// message once, in its newest state, without gaps.
@Suite("MessageWindow races between pages and events")
struct MessageWindowRaceTests {
    @Test func eventBeforePageKeepsTheMessageTheFeedAppended() {
        var harness = WindowHarness(pageSize: 5, capacity: 20, messages: 12)
        harness.perform(.open)
        harness.perform(.scrollUp)
        // An attached window asks for the newest page again (the screen
        // re-opens); a message lands and is announced while it is in flight.
        let request = harness.window.nextRequest(for: .open)!
        let page = harness.conversation.page(request)
        let posted = harness.conversation.post()
        #expect(harness.deliverEvents() == [.appended(count: 1)])
        #expect(harness.deliver(page, for: request) == [.replaced])
        #expect(harness.ids == Array(harness.conversation.ids.suffix(6)))
        #expect(harness.ids.last == posted.id)
        #expect(harness.window.attachedToTail)
    }

    @Test func pageBeforeEventAppliesOnlyNewerVersions() {
        var harness = WindowHarness(pageSize: 5, messages: 5)
        harness.perform(.open)
        let target = harness.ids[1]
        harness.conversation.edit(target, body: "first edit")
        // The page is read after the edit; the event for it arrives later.
        let request = harness.window.nextRequest(for: .open)!
        harness.deliver(harness.conversation.page(request), for: request)
        #expect(harness.window.message(withID: target)?.body == "first edit")
        #expect(harness.deliverEvents() == [])
        harness.conversation.edit(target, body: "second edit")
        #expect(harness.deliverEvents() == [.updated(ids: [target])])
        #expect(harness.window.message(withID: target) == harness.conversation.message(target))
    }

    @Test func theSameMessageFromAnEventAndAPageIsHeldOnce() {
        var harness = WindowHarness(pageSize: 5, messages: 4)
        harness.perform(.open)
        let posted = harness.conversation.post()
        #expect(harness.deliverEvents() == [.appended(count: 1)])
        harness.perform(.open)
        #expect(harness.ids == harness.conversation.ids)
        #expect(harness.ids.filter { $0 == posted.id }.count == 1)
        // And the other way round: a page first, then the event of a message it holds.
        let second = harness.conversation.post()
        harness.perform(.open)
        #expect(harness.deliverEvents() == [])
        #expect(harness.ids.filter { $0 == second.id }.count == 1)
    }

    @Test func aStaleEventNeverOverwritesAFresherRow() throws {
        var harness = WindowHarness(pageSize: 5, messages: 5)
        harness.perform(.open)
        let target = harness.ids[2]
        let old = try #require(harness.conversation.message(target))
        harness.conversation.edit(target, body: "new")
        harness.deliverEvents()
        let staleEvent = HistoryEvent(version: old.version, kind: .created, message: old)
        #expect(harness.window.apply(staleEvent) == [])
        #expect(harness.window.message(withID: target)?.body == "new")
    }

    @Test func anEditTheFeedDeliveredBeforeItsPageIsRefreshed() throws {
        var harness = WindowHarness(pageSize: 5, capacity: 20, messages: 20)
        harness.perform(.open)
        // The older page is read, then a message in it is edited and the
        // feed delivers that edit before the page arrives: the row was not
        // loaded, so the window could not apply it.
        let request = try #require(harness.window.nextRequest(for: .scrollUp))
        let page = harness.conversation.page(request)
        let target = page.messages[2].id
        harness.conversation.edit(target, body: "edited while the page was in flight")
        #expect(harness.deliverEvents() == [])
        #expect(harness.window.apply(page, for: request).first == .prepended(count: 5, anchorID: request.cursor.id))
        #expect(harness.window.pendingRefreshes
            == [WindowRefresh(since: page.version, minID: page.messages[0].id, maxID: page.messages[4].id)])
        #expect(harness.drainRefreshes() == [.updated(ids: [target])])
        #expect(harness.window.message(withID: target) == harness.conversation.message(target))
    }

    @Test func aPageReachingTheBottomDoesNotAttachOverAMessageTheFeedAnnounced() throws {
        var harness = WindowHarness(pageSize: 5, capacity: 10, messages: 30)
        harness.perform(.open)
        for _ in 0..<3 { harness.perform(.scrollUp) }
        harness.perform(.scrollDown)
        // The last page down is read, then a message is posted and announced
        // while the window is still detached (so it is only noted).
        let request = try #require(harness.window.nextRequest(for: .scrollDown))
        let page = harness.conversation.page(request)
        #expect(!page.hasNewer)
        let posted = harness.conversation.post()
        #expect(harness.deliverEvents() == [])
        harness.deliver(page, for: request)
        #expect(!harness.window.attachedToTail)
        #expect(harness.window.nextRequest(for: .scrollDown) != nil)
        harness.perform(.scrollDown)
        #expect(harness.window.attachedToTail)
        #expect(harness.ids.last == posted.id)
        #expect(harness.ids == Array(harness.conversation.ids.suffix(harness.ids.count)))
    }

    @Test func aPageThatNoLongerFitsChangesNothing() throws {
        var harness = WindowHarness(pageSize: 5, capacity: 20, messages: 30)
        harness.perform(.open)
        let request = try #require(harness.window.nextRequest(for: .scrollUp))
        let page = harness.conversation.page(request)
        harness.perform(.scrollUp)
        let before = harness.window
        #expect(harness.window.apply(page, for: request) == [])
        #expect(harness.window == before)
    }

    @Test func aCompactedAnswerListingAMessageAfterANewerOneLeavesNoGap() {
        var harness = WindowHarness(pageSize: 5, capacity: 20, messages: 5)
        harness.perform(.open)
        let first = harness.conversation.post(body: "a")
        let second = harness.conversation.post(body: "b")
        harness.conversation.edit(first.id, body: "a, edited")
        // One answer: [created second, created first(edited)], ordered by last change.
        let batch = harness.conversation.events(since: harness.streamVersion!)
        #expect(batch.events.map(\.message.id) == [second.id, first.id])
        #expect(harness.window.apply(batch.events, through: batch.version) == [.appended(count: 2)])
        #expect(harness.ids == harness.conversation.ids)
        #expect(harness.window.message(withID: first.id)?.body == "a, edited")
    }

    @Test func eventByEventACompactedAnswerReportsTheInsertion() {
        var harness = WindowHarness(pageSize: 5, capacity: 20, messages: 5)
        harness.perform(.open)
        let first = harness.conversation.post(body: "a")
        let second = harness.conversation.post(body: "b")
        harness.conversation.edit(first.id, body: "a, edited")
        let batch = harness.conversation.events(since: harness.streamVersion!)
        #expect(harness.window.apply(batch.events[0]) == [.appended(count: 1)])
        #expect(harness.window.apply(batch.events[1]) == [.inserted(ids: [first.id])])
        #expect(harness.ids == harness.conversation.ids)
        #expect(harness.ids.last == second.id)
    }
}

extension PageCursor {
    /// The id of a `before`/`after`/`around` cursor (tests only).
    var id: Int64? {
        switch self {
        case .before(let id), .after(let id), .around(let id): id
        case .newest, .between, .aroundTime: nil
        }
    }
}
