import HistoryClient

/// What the viewport simulator drives: a chat screen's logic with its
/// networking answered at once by a ``SimulatedServer``. Implemented by the
/// real ``ChatScreen`` (``ModelScreen``) and by the old DocC sample's rules
/// (``OldSampleScreen``), so the same properties judge both.
protocol ScreenUnderTest {
    /// The rows drawn, top to bottom.
    var rowIDs: [ChatRowID] { get }
    /// The window's rows (memory and order are checked on them).
    var windowMessages: [HistoryMessage] { get }
    var capacity: Int { get }
    /// The list bottom-aligns content shorter than the screen (`.defaultScrollAnchor(.bottom)`).
    var bottomAlignsShortContent: Bool { get }
    /// A failure is on screen.
    var showsError: Bool { get }
    /// Where the live feed started; nil before it did.
    var feedStart: Int64? { get }
    /// The versions of the pages applied: a feed must start at one of them.
    var pageVersions: Set<Int64> { get }
    var outbox: [PendingMessage] { get }
    /// Handles one input; returns one scroll action per frame drawn (the
    /// rows are the final ones in every frame; empty: nothing to scroll).
    mutating func handle(_ input: ScreenInput, server: inout SimulatedServer) -> [ChatScrollCommand.Action]
}

enum ScreenInput {
    case open
    /// The view's report after a layout or a scroll.
    case viewport(ChatViewport)
    /// One answer of the live feed.
    case deliverFeed(limit: Int)
    case jump(Int64)
    case jumpToLatest
    case send(clientID: String)
    /// Sends waiting for a retry try again (the model's backoff elapsed).
    case retrySends
    /// The user taps "retry" on failed sends.
    case retryFailed
    case typing([String])
    case suspend
    case resume

    /// Inputs through which the user asks to move; the others must not move the row being read.
    var isUserMove: Bool {
        switch self {
        case .open, .jump, .jumpToLatest, .send, .retryFailed: true
        default: false
        }
    }
}

/// ``ChatScreen`` with the networking ``ChatScreenModel`` does, done at once
/// against the simulated server.
struct ModelScreen: ScreenUnderTest {
    var screen: ChatScreen
    private(set) var feedStart: Int64?
    private(set) var pageVersions: Set<Int64> = []
    private var feedPosition: Int64?
    private var suspended = false
    private var failures: [String: Int] = [:]
    static let maximumSendAttempts = 3

    init(configuration: MessageWindowConfiguration) {
        screen = ChatScreen(configuration: configuration, me: "me")
    }

    var rowIDs: [ChatRowID] { screen.rows.map(\.id) }
    var windowMessages: [HistoryMessage] { screen.window.messages }
    var capacity: Int { screen.window.configuration.capacity }
    var bottomAlignsShortContent: Bool { false }
    var showsError: Bool { screen.lastError != nil }
    var outbox: [PendingMessage] { screen.outbox }

    mutating func handle(_ input: ScreenInput, server: inout SimulatedServer) -> [ChatScrollCommand.Action] {
        let serial = screen.scroll.serial
        switch input {
        case .open:
            load(screen.request(for: .open), server: &server)
        case .viewport(let viewport):
            load(screen.viewportDidChange(viewport), server: &server)
        case .deliverFeed(let limit):
            guard !suspended, let position = feedPosition else { break }
            do {
                let batch = try server.events(since: position, limit: limit)
                if let reopen = screen.receive(batch) {
                    load(reopen, server: &server)
                } else {
                    feedPosition = batch.version
                    refresh(server: &server)
                }
            } catch {
                screen.report("feed: server down")
            }
        case .jump(let id):
            load(screen.request(for: .jump(to: id)), server: &server)
        case .jumpToLatest:
            load(screen.jumpToLatest(), server: &server)
        case .send(let clientID):
            load(screen.send(PendingMessage(clientID: clientID, body: "mine")), server: &server)
            attempt(clientID, server: &server)
        case .retrySends:
            for pending in screen.outbox where pending.state == .sending {
                attempt(pending.clientID, server: &server)
            }
        case .retryFailed:
            for pending in screen.outbox where pending.state != .sending {
                failures[pending.clientID] = 0
                attempt(pending.clientID, server: &server)
            }
        case .typing(let users):
            screen.typingDidChange(users)
        case .suspend:
            suspended = true
        case .resume:
            suspended = false
        }
        return screen.scroll.serial == serial ? [] : [screen.scroll.action]
    }

    private mutating func load(_ request: WindowRequest?, server: inout SimulatedServer) {
        guard let request else { return }
        do {
            let page = try server.page(request)
            screen.receive(page, for: request)
            pageVersions.insert(page.version)
            let replaces: Bool
            switch request.cursor {
            case .newest, .around, .aroundTime: replaces = true
            case .after: replaces = page.reset == true
            default: replaces = false
            }
            if feedPosition == nil || replaces {
                feedPosition = page.version
                feedStart = page.version
            }
            refresh(server: &server)
        } catch {
            screen.requestDidFail(request, reason: "server down")
        }
    }

    private mutating func refresh(server: inout SimulatedServer) {
        for refresh in screen.takePendingRefreshes() {
            var since = refresh.since
            while let batch = try? server.events(since: since, limit: 50, minID: refresh.minID, maxID: refresh.maxID) {
                screen.receiveRefresh(batch.events)
                since = batch.version
                if !batch.hasMore { break }
            }
        }
    }

    private mutating func attempt(_ clientID: String, server: inout SimulatedServer) {
        guard let pending = screen.outbox.first(where: { $0.clientID == clientID }) else { return }
        screen.sendWillStart(clientID: clientID)
        do {
            let message = try server.post(body: pending.body, sender: "me", clientID: clientID)
            screen.sendDidSucceed(clientID: clientID, message: message)
        } catch {
            failures[clientID, default: 0] += 1
            if failures[clientID, default: 0] >= Self.maximumSendAttempts {
                screen.sendDidFail(clientID: clientID, reason: "server down")
            }
        }
    }
}
