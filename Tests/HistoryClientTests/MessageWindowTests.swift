import HistoryClient
import Testing

/// Each rule of MessageWindow's policy, against a simulated conversation.
@Suite("MessageWindow rules")
struct MessageWindowTests {
    // MARK: - Starting at the bottom

    @Test func opensOnTheNewestPage() {
        var harness = WindowHarness(pageSize: 5, messages: 23)
        #expect(harness.window.nextRequest(for: .open) == WindowRequest(cursor: .newest, limit: 5))
        let changes = harness.perform(.open)
        #expect(changes == [.replaced])
        #expect(harness.ids == Array(harness.conversation.ids.suffix(5)))
        #expect(harness.window.hasOlder)
        #expect(harness.window.attachedToTail)
        #expect(!harness.window.hasNewer)
    }

    /// Opening again on the rows it shows (a 304 hands back the same page):
    /// nothing changed, so nothing to redraw; a newer message, or rows
    /// scrolled in above, make it a replacement again.
    @Test func theNewestPageAgainOnTheSameRowsChangesNothing() {
        var harness = WindowHarness(pageSize: 5, messages: 23)
        #expect(harness.perform(.open) == [.replaced])
        let shown = harness.window
        #expect(harness.perform(.open) == [])
        #expect(harness.window.messages == shown.messages && harness.window.hasOlder && harness.window.attachedToTail)

        harness.perform(.scrollUp)
        #expect(harness.perform(.open) == [.replaced])
        #expect(harness.ids == Array(harness.conversation.ids.suffix(5)))

        harness.conversation.post()
        #expect(harness.perform(.open) == [.replaced])
        #expect(harness.ids == Array(harness.conversation.ids.suffix(5)))
    }

    @Test func aConversationShorterThanAPageIsAllOfIt() {
        var harness = WindowHarness(pageSize: 5, messages: 3)
        #expect(harness.perform(.open) == [.replaced])
        #expect(harness.ids == harness.conversation.ids)
        #expect(!harness.window.hasOlder)
        #expect(harness.window.attachedToTail)
        #expect(harness.window.nextRequest(for: .scrollUp) == nil)
        #expect(harness.window.nextRequest(for: .scrollDown) == nil)
    }

    @Test func anEmptyConversationTakesItsFirstMessageLive() {
        var harness = WindowHarness(pageSize: 5)
        #expect(harness.perform(.open) == [.replaced])
        #expect(harness.window.messages.isEmpty)
        #expect(harness.window.attachedToTail)
        harness.conversation.post()
        #expect(harness.deliverEvents() == [.appended(count: 1)])
        #expect(harness.ids == harness.conversation.ids)
    }

    // MARK: - Scrolling up

    @Test func scrollingUpPrependsTheNextOlderPageAndNamesTheAnchor() {
        var harness = WindowHarness(pageSize: 5, capacity: 20, messages: 23)
        harness.perform(.open)
        let top = harness.window.oldestID!
        #expect(harness.window.nextRequest(for: .scrollUp) == WindowRequest(cursor: .before(top), limit: 5))
        #expect(harness.perform(.scrollUp) == [.prepended(count: 5, anchorID: top)])
        #expect(harness.ids == Array(harness.conversation.ids.suffix(10)))
        #expect(harness.window.attachedToTail)
    }

    @Test func prependingPastCapacityTrimsTheNewestEndAndDetaches() {
        var harness = WindowHarness(pageSize: 5, capacity: 10, messages: 30)
        harness.perform(.open)
        harness.perform(.scrollUp)
        let top = harness.window.oldestID!
        #expect(harness.perform(.scrollUp) == [.prepended(count: 5, anchorID: top), .trimmed(edge: .newest, count: 5)])
        #expect(harness.ids == Array(harness.conversation.ids[15..<25]))
        #expect(!harness.window.attachedToTail)
        #expect(harness.window.hasNewer)
        #expect(harness.window.messages.count == 10)
    }

    @Test func theTopOfTheConversationStopsScrollingUp() {
        var harness = WindowHarness(pageSize: 5, capacity: 20, messages: 8)
        harness.perform(.open)
        let top = harness.window.oldestID!
        #expect(harness.perform(.scrollUp) == [.prepended(count: 3, anchorID: top)])
        #expect(!harness.window.hasOlder)
        #expect(harness.window.nextRequest(for: .scrollUp) == nil)
    }

    // MARK: - Scrolling down while detached

    @Test func scrollingDownAppendsTrimsTheOldestEndAndReattaches() {
        var harness = WindowHarness(pageSize: 5, capacity: 10, messages: 30)
        harness.perform(.open)
        for _ in 0..<3 { harness.perform(.scrollUp) }
        #expect(harness.ids == Array(harness.conversation.ids[10..<20]))
        let bottom = harness.window.newestID!
        #expect(harness.window.nextRequest(for: .scrollDown)
            == WindowRequest(cursor: .after(bottom), limit: 5, window: 10))
        #expect(harness.perform(.scrollDown) == [.appended(count: 5), .trimmed(edge: .oldest, count: 5)])
        #expect(harness.ids == Array(harness.conversation.ids[15..<25]))
        #expect(!harness.window.attachedToTail)
        #expect(harness.perform(.scrollDown) == [.appended(count: 5), .trimmed(edge: .oldest, count: 5)])
        #expect(harness.ids == Array(harness.conversation.ids[20..<30]))
        #expect(harness.window.attachedToTail)
        #expect(harness.window.hasOlder)
        #expect(harness.window.nextRequest(for: .scrollDown) == nil)
    }

    @Test func theServersResetAnswerReplacesTheWindow() {
        var harness = WindowHarness(pageSize: 5, capacity: 10, messages: 60)
        harness.perform(.open)
        for _ in 0..<8 { harness.perform(.scrollUp) }
        #expect(harness.ids == Array(harness.conversation.ids[15..<25]))
        // 35 messages lie above the window, more than its server reset window of 10.
        let request = harness.window.nextRequest(for: .scrollDown)!
        let page = harness.conversation.page(request)
        #expect(page.reset == true)
        #expect(harness.deliver(page, for: request) == [.replaced])
        #expect(harness.ids == Array(harness.conversation.ids.suffix(5)))
        #expect(harness.window.attachedToTail)
        #expect(harness.window.hasOlder)
    }

    @Test func aPlainAnswerToAWindowedRequestAppends() {
        var harness = WindowHarness(pageSize: 5, capacity: 10, messages: 22)
        harness.perform(.open)
        for _ in 0..<2 { harness.perform(.scrollUp) }
        #expect(harness.ids == Array(harness.conversation.ids[7..<17]))
        let request = harness.window.nextRequest(for: .scrollDown)!
        let page = harness.conversation.page(request)
        #expect(page.reset == false)
        #expect(harness.deliver(page, for: request) == [.appended(count: 5), .trimmed(edge: .oldest, count: 5)])
        #expect(harness.ids == Array(harness.conversation.ids[12..<22]))
        #expect(harness.window.attachedToTail)
    }

    // MARK: - Back at the bottom

    @Test func atTheBottomAnAttachedWindowShrinksToOnePageLocally() {
        var harness = WindowHarness(pageSize: 5, capacity: 20, messages: 30)
        harness.perform(.open)
        harness.perform(.scrollUp)
        harness.perform(.scrollUp)
        #expect(harness.window.nextRequest(for: .reachedBottom) == nil)
        #expect(harness.perform(.reachedBottom) == [.trimmed(edge: .oldest, count: 10)])
        #expect(harness.ids == Array(harness.conversation.ids.suffix(5)))
        #expect(harness.window.hasOlder)
        #expect(harness.window.attachedToTail)
        #expect(harness.perform(.reachedBottom) == [])
    }

    @Test func atTheBottomADetachedWindowAsksForTheNewestPage() {
        var harness = WindowHarness(pageSize: 5, capacity: 10, messages: 30)
        harness.perform(.open)
        for _ in 0..<3 { harness.perform(.scrollUp) }
        #expect(!harness.window.attachedToTail)
        #expect(harness.window.nextRequest(for: .reachedBottom) == WindowRequest(cursor: .newest, limit: 5))
        #expect(harness.perform(.reachedBottom) == [.replaced])
        #expect(harness.ids == Array(harness.conversation.ids.suffix(5)))
        #expect(harness.window.attachedToTail)
    }

    // MARK: - Live events

    @Test func aNewMessageAppendsWhileAttachedAndTrimsTheOldest() {
        var harness = WindowHarness(pageSize: 5, capacity: 6, messages: 5)
        harness.perform(.open)
        harness.conversation.post()
        #expect(harness.deliverEvents() == [.appended(count: 1)])
        harness.conversation.post()
        harness.conversation.post()
        #expect(harness.deliverEvents() == [.appended(count: 2), .trimmed(edge: .oldest, count: 2)])
        #expect(harness.ids == Array(harness.conversation.ids.suffix(6)))
        #expect(harness.window.hasOlder)
        #expect(harness.window.attachedToTail)
    }

    @Test func aNewMessageIsOnlyNotedWhileDetached() {
        var harness = WindowHarness(pageSize: 5, capacity: 10, messages: 30)
        harness.perform(.open)
        for _ in 0..<3 { harness.perform(.scrollUp) }
        let before = harness.ids
        let posted = harness.conversation.post()
        #expect(harness.deliverEvents() == [])
        #expect(harness.ids == before)
        #expect(harness.window.newestKnownID == posted.id)
        #expect(harness.window.hasNewer)
    }

    @Test func editsAndDeletesApplyInPlaceWhereverLoaded() throws {
        var harness = WindowHarness(pageSize: 5, capacity: 10, messages: 30)
        harness.perform(.open)
        for _ in 0..<3 { harness.perform(.scrollUp) }
        let loaded = harness.ids
        harness.conversation.edit(loaded[2], body: "edited")
        harness.conversation.delete(loaded[7])
        harness.conversation.edit(harness.conversation.ids[0], body: "not loaded")
        #expect(harness.deliverEvents() == [.updated(ids: [loaded[2], loaded[7]])])
        #expect(harness.window.message(withID: loaded[2]) == harness.conversation.message(loaded[2]))
        let tombstone = try #require(harness.window.message(withID: loaded[7]))
        #expect(tombstone.deleted && tombstone.body.isEmpty)
        #expect(harness.ids == loaded)
    }

    @Test func jumpingToAReplyLoadsThePageAroundIt() {
        var harness = WindowHarness(pageSize: 5, capacity: 10, messages: 40)
        harness.perform(.open)
        let target = harness.conversation.ids[10]
        #expect(harness.window.nextRequest(for: .jump(to: target)) == WindowRequest(cursor: .around(target), limit: 5))
        #expect(harness.perform(.jump(to: target)) == [.jumped(anchorID: target)])
        #expect(harness.ids == Array(harness.conversation.ids[8..<13]))
        #expect(!harness.window.attachedToTail)
        #expect(harness.window.nextRequest(for: .jump(to: target)) == nil)
    }

    @Test func outOfRangeNumbersAreClamped() {
        let configuration = MessageWindowConfiguration(pageSize: 0, capacity: -3, serverResetWindow: 50_000)
        #expect(configuration.pageSize == 1)
        #expect(configuration.capacity == 1)
        #expect(configuration.serverResetWindow == 10_000)
        #expect(MessageWindowConfiguration().capacity == 250)
    }
}

/// Opening a conversation from the inbox at its first unread message.
@Suite("MessageWindow opening at the first unread")
struct MessageWindowFirstUnreadTests {
    @Test func asksForThePageAroundTheFirstUnreadAndReportsAJump() {
        var harness = WindowHarness(pageSize: 5, messages: 30)
        let firstUnread = harness.conversation.ids[12]
        #expect(harness.window.nextRequest(for: .openAtFirstUnread(firstUnread))
                == WindowRequest(cursor: .around(firstUnread), limit: 5))
        #expect(harness.perform(.openAtFirstUnread(firstUnread)) == [.jumped(anchorID: firstUnread)])
        #expect(harness.ids == Array(harness.conversation.ids[10..<15]))
        #expect(harness.window.hasOlder && harness.window.hasNewer && !harness.window.attachedToTail)
        // Reading down reaches the live tail as after any jump.
        while harness.window.nextRequest(for: .scrollDown) != nil { harness.perform(.scrollDown) }
        #expect(harness.window.attachedToTail)
        #expect(harness.window.newestID == harness.conversation.newestID)
    }

    @Test func withNothingUnreadItOpensAtTheBottom() {
        var harness = WindowHarness(pageSize: 5, messages: 30)
        #expect(harness.window.nextRequest(for: .openAtFirstUnread(nil)) == WindowRequest(cursor: .newest, limit: 5))
        #expect(harness.perform(.openAtFirstUnread(nil)) == [.replaced])
        #expect(harness.window.attachedToTail)
        // Opening again at an unread message re-centres there, even when loaded.
        let firstUnread = harness.conversation.ids[27]
        #expect(harness.window.nextRequest(for: .openAtFirstUnread(firstUnread))
                == WindowRequest(cursor: .around(firstUnread), limit: 5))
    }
}
