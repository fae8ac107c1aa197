import HistoryClient
import Testing

/// ChatScreen's rules one at a time, against the simulated conversation.
@Suite("ChatScreen")
struct ChatScreenTests {
    private func opened(_ messages: Int, intent: WindowIntent = .open) -> (ChatScreen, SimulatedConversation) {
        var conversation = SimulatedConversation()
        for index in 0..<messages { conversation.post(body: "m\(index)", sender: "ben") }
        var screen = ChatScreen(configuration: MessageWindowConfiguration(pageSize: 10), me: "ana")
        if let request = screen.request(for: intent) { screen.receive(conversation.page(request), for: request) }
        return (screen, conversation)
    }

    private func viewport(_ screen: ChatScreen, showing ids: [Int64], fromBottom distance: Double) -> ChatViewport {
        ChatViewport(visibleRows: ids.enumerated().map { .init(id: .message($1), top: Double($0) * 50) },
                     distanceFromBottom: distance, height: 500)
    }

    @Test func opensAtTheFirstUnreadWithTheDividerOnTop() {
        let (screen, _) = opened(40, intent: .openAtFirstUnread(20))
        let ids = screen.rows.map(\.id)
        let divider = try? #require(ids.firstIndex(of: .unreadDivider))
        #expect(divider.map { ids[$0 + 1] } == .message(20))
        #expect(screen.scroll.action == .keep(.unreadDivider, top: 0))
        #expect(ids.first == .loadingOlder && ids.last == .loadingNewer)
    }

    @Test func newMessagesAreCountedForAScrolledUpReaderAndFollowedAtTheBottom() {
        var (screen, conversation) = opened(20)
        let visible = Array(screen.window.messages.prefix(3).map(\.id))
        _ = screen.viewportDidChange(viewport(screen, showing: visible, fromBottom: 400))
        conversation.post(body: "one", sender: "ben")
        conversation.post(body: "two", sender: "ben")
        conversation.post(body: "mine", sender: "ana")
        _ = screen.receive(conversation.events(since: 20))
        #expect(screen.newMessageCount == 2)
        #expect(screen.scroll.action == .keep(.message(visible[0]), top: 0))

        let bottom = Array(screen.window.messages.suffix(3).map(\.id))
        _ = screen.viewportDidChange(viewport(screen, showing: bottom, fromBottom: 0))
        #expect(screen.newMessageCount == 0)
        conversation.post(body: "three", sender: "ben")
        _ = screen.receive(conversation.events(since: 23))
        #expect(screen.newMessageCount == 0)
        #expect(screen.scroll.action == .scrollToBottom)
    }

    @Test func jumpToLatestReplacesADetachedWindowAtTheBottom() {
        var (screen, conversation) = opened(60)
        if let request = screen.request(for: .jump(to: 5)) { screen.receive(conversation.page(request), for: request) }
        #expect(screen.rows.last?.id == .loadingNewer)
        #expect(screen.scroll.action == .keep(.message(5), top: 0))
        let request = screen.jumpToLatest()
        #expect(request?.cursor == .newest)
        if let request { screen.receive(conversation.page(request), for: request) }
        #expect(screen.rows.last?.id == .message(60))
        #expect(screen.scroll.action == .scrollToBottom)
    }

    @Test func theReadMarkerFollowsWhatWasSeen() {
        var (screen, _) = opened(20)
        #expect(screen.readMarkerToSend == nil)
        _ = screen.viewportDidChange(viewport(screen, showing: [17, 18, 19], fromBottom: 30))
        #expect(screen.readMarkerToSend == 19)
        screen.readMarkerDidMove(to: 19)
        #expect(screen.readMarkerToSend == nil)
        _ = screen.viewportDidChange(viewport(screen, showing: [12, 13], fromBottom: 300))
        #expect(screen.readMarkerToSend == nil)
    }

    @Test func theTypingRowIsFollowedOnlyAtTheBottom() {
        var (screen, _) = opened(20)
        _ = screen.viewportDidChange(viewport(screen, showing: [18, 19, 20], fromBottom: 0))
        screen.typingDidChange(["ben"])
        #expect(screen.rows.last == .typing(["ben"]))
        #expect(screen.scroll.action == .scrollToBottom)
        _ = screen.viewportDidChange(viewport(screen, showing: [12, 13], fromBottom: 400))
        screen.typingDidChange([])
        #expect(screen.rows.last?.id == .message(20))
        #expect(screen.scroll.action == .keep(.message(12), top: 0))
    }

    @Test func aPendingSendGivesWayToItsStoredMessageInPlace() {
        var (screen, conversation) = opened(5)
        _ = screen.send(PendingMessage(clientID: "c1", body: "hello"))
        #expect(screen.rows.last?.id == .pending("c1"))
        screen.sendWillStart(clientID: "c1")
        screen.sendDidFail(clientID: "c1", reason: "offline")
        #expect(screen.outbox.first?.state == .failed(reason: "offline"))
        let stored = conversation.post(body: "hello", sender: "ana", clientID: "c1")
        // The feed brings it before the send's own answer: the pending row goes.
        _ = screen.receive(conversation.events(since: 5))
        #expect(screen.outbox.isEmpty)
        #expect(screen.rows.last == .message(stored))
        screen.sendDidSucceed(clientID: "c1", message: stored)
        #expect(screen.rows.filter { $0.id == .message(stored.id) }.count == 1)
    }
}
