import HistoryClient

/// The rules of the chat-screen sample the DocC article showed before the
/// chat screen model existed (main at e8eed5a), kept to prove the viewport
/// simulator catches their bugs:
/// - `isAtBottom` starts true and is never set false: every new message
///   scrolls to the bottom;
/// - `lastMessageAppeared` sends `.reachedBottom` when the last *loaded*
///   row appears, so a detached window is replaced by the newest page;
/// - only `.prepended` keeps a row (at the top, and in `onChange`, one frame
///   after the rows changed); `.trimmed` and `.updated` are ignored;
/// - when opening fails, the feed starts at `newestReadVersion`, 0;
/// - `.defaultScrollAnchor(.bottom)` bottom-aligns a short chat;
/// - errors are swallowed (`catch {}` with a comment).
struct OldSampleScreen: ScreenUnderTest {
    var window: MessageWindow
    var isAtBottom = true
    private(set) var feedStart: Int64?
    private(set) var pageVersions: Set<Int64> = []
    private var feedPosition: Int64?
    private var lastLoadedShown: Int64?

    init(configuration: MessageWindowConfiguration) {
        window = MessageWindow(configuration: configuration)
    }

    var rowIDs: [ChatRowID] {
        var rows: [ChatRowID] = []
        if window.hasOlder { rows.append(.loadingOlder) }
        rows += window.messages.map { .message($0.id) }
        if window.hasNewer { rows.append(.loadingNewer) }
        return rows
    }
    var windowMessages: [HistoryMessage] { window.messages }
    var capacity: Int { window.configuration.capacity }
    var bottomAlignsShortContent: Bool { true }
    var showsError: Bool { false }
    var outbox: [PendingMessage] { [] }

    mutating func handle(_ input: ScreenInput, server: inout SimulatedServer) -> [ChatScrollCommand.Action] {
        switch input {
        case .open:
            let frames = perform(.open, server: &server)
            feedPosition = window.newestReadVersion
            feedStart = feedPosition
            return frames
        case .viewport(let viewport):
            let visible = viewport.visibleRows.map(\.id)
            if visible.contains(.loadingOlder) { return perform(.scrollUp, server: &server) }
            if visible.contains(.loadingNewer) { return perform(.scrollDown, server: &server) }
            if let last = window.messages.last?.id, visible.contains(.message(last)), lastLoadedShown != last {
                lastLoadedShown = last
                isAtBottom = true
                return perform(.reachedBottom, server: &server)
            }
            return []
        case .deliverFeed(let limit):
            guard let position = feedPosition, let batch = try? server.events(since: position, limit: limit) else {
                return []
            }
            feedPosition = batch.version
            return render(window.apply(batch.events, through: batch.version))
        case .jump(let id):
            return perform(.jump(to: id), server: &server)
        case .jumpToLatest:
            return perform(.reachedBottom, server: &server)
        case .send, .retrySends, .retryFailed, .typing, .suspend, .resume:
            return []
        }
    }

    private mutating func perform(_ intent: WindowIntent, server: inout SimulatedServer) -> [ChatScrollCommand.Action] {
        guard let request = window.nextRequest(for: intent) else {
            return intent == .reachedBottom ? render(window.settleAtBottom()) : []
        }
        guard let page = try? server.page(request) else { return [] }   // "show a retry row" (never shown)
        pageVersions.insert(page.version)
        return render(window.apply(page, for: request))
    }

    /// The rows change in one frame; `onChange(of: scrollRequest)` scrolls in the next.
    private func render(_ changes: [WindowChange]) -> [ChatScrollCommand.Action] {
        var request: ChatScrollCommand.Action?
        for change in changes {
            switch change {
            case .replaced: request = .scrollToBottom
            case .prepended(_, let anchorID?): request = .keep(.message(anchorID), top: 0)
            case .jumped(let anchorID): request = .keep(.message(anchorID), top: 0)
            case .appended: if isAtBottom { request = .scrollToBottom }
            default: break
            }
        }
        guard !changes.isEmpty else { return [] }
        return request.map { [.none, $0] } ?? [.none]
    }
}
