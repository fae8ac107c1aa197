import Foundation
import Observation

/// The chat screen's view model: a ``ChatScreen`` carried out over a
/// ``ChatHistoryClient``. The view draws ``rows``, performs each new
/// ``scroll`` command once, and reports its ``ChatViewport``; everything
/// else (pages, the live feed and its resets, who is typing, the outbox and
/// its retries, the read marker, coming back from the background) happens here.
///
/// ```swift
/// @State var model: ChatScreenModel
/// @State private var position = ScrollPosition(idType: ChatRowID.self)
///
/// ForEach(model.rows) { row in
///     RowView(row: row, onRetry: model.retry(clientID:), onReplyTap: model.jump(to:))
///         .id(row.id)
/// }
/// .scrollPosition($position)
/// .onScrollGeometryChange(for: ScrollGeometry.self) { $0 } action: { _, geometry in
///     model.viewportDidChange(layout.viewport(rows: model.rows.map(\.id), geometry: geometry))
/// }
/// .onChange(of: model.scroll, initial: true) { _, command in
///     withTransaction(transaction) { perform(command.action) }
/// }
/// .task { model.open(atFirstUnread: firstUnreadID) }
/// .onChange(of: scenePhase) { _, phase in
///     if phase == .active { model.resume() } else { model.suspend() }
/// }
/// ```
///
/// (Examples/ChatScreen's `ChatScreenView`, and <doc:BuildingAChatScreen>.)
///
/// Foundation and Observation only: it builds and is tested on Linux.
@MainActor @Observable
public final class ChatScreenModel {
    /// The whole state; the properties below read from it.
    public private(set) var screen: ChatScreen

    @ObservationIgnored public let client: ChatHistoryClient
    @ObservationIgnored public let conversationID: String
    /// Attempts of one send before it shows failed (transient failures
    /// only; a refusal fails at once). Default: 5.
    @ObservationIgnored public var maximumSendAttempts = 5
    /// How long the read marker waits for the reader to stop scrolling. Default: 0.5 s.
    @ObservationIgnored public var readMarkerDelay: Duration = .milliseconds(500)

    @ObservationIgnored private var feedTask: Task<Void, Never>?
    /// The last typing call, which the next one waits for: calls reach the server in order.
    @ObservationIgnored private var typingTask: Task<Void, Never>?
    @ObservationIgnored private var readTask: Task<Void, Never>?
    @ObservationIgnored private var sendTasks: [String: Task<Void, Never>] = [:]
    @ObservationIgnored private var pageTasks: [WindowRequest: Task<Void, Never>] = [:]
    /// Where the live feed resumes: every change up to it is applied.
    @ObservationIgnored private var feedSince: Int64?
    @ObservationIgnored private var isSuspended = false

    public init(client: ChatHistoryClient, conversationID: String,
                configuration: MessageWindowConfiguration = MessageWindowConfiguration(), me: String? = nil) {
        self.client = client
        self.conversationID = conversationID
        self.screen = ChatScreen(configuration: configuration, me: me)
    }

    // MARK: - What the view reads

    public var rows: [ChatRow] { screen.rows }
    public var scroll: ChatScrollCommand { screen.scroll }
    /// The "N new" badge of the "jump to latest" button.
    public var newMessageCount: Int { screen.newMessageCount }
    /// Show the "jump to latest" button.
    public var showsJumpToLatest: Bool { !screen.followsBottom || screen.window.hasNewer }
    public var isOpening: Bool { screen.isOpening }
    public var isLoadingOlder: Bool { screen.isLoadingOlder }
    public var isLoadingNewer: Bool { screen.isLoadingNewer }
    /// The last failure (a page, the feed), nil after the next success.
    public var lastError: String? { screen.lastError }
    /// The live feed is running.
    public var isFollowing: Bool { feedTask != nil }
    /// The last jump's target did not exist (show "message not found").
    public var missingJumpTarget: Int64? { screen.window.missingJumpTarget }
    /// Everyone else typing now, from the live feed (a stream's `typing`
    /// events, a long-poll's `typing` list); also the last row of ``rows``
    /// while the window holds the bottom.
    public var typingUsers: [String] { screen.typingUsers }

    // MARK: - What the view does

    /// Opens at the bottom, or at the first unread message with the
    /// divider above it, and starts the live feed.
    public func open(atFirstUnread firstUnreadID: Int64? = nil) {
        load(screen.request(for: firstUnreadID.map { .openAtFirstUnread($0) } ?? .open))
    }

    public func viewportDidChange(_ viewport: ChatViewport) {
        load(screen.viewportDidChange(viewport))
        scheduleReadMarker()
    }

    /// Shows the message `id` (a reply's original), loading the page around it when needed.
    public func jump(to id: Int64) {
        load(screen.request(for: .jump(to: id)))
    }

    /// Shows the first message created at or after `date` (a date
    /// picker), at the top like a jump to a reply; a date after the newest
    /// message shows the bottom.
    public func jump(toDate date: Date) {
        load(screen.request(for: .jumpToDate(date)))
    }

    /// The "jump to latest" button.
    public func jumpToLatest() {
        load(screen.jumpToLatest())
    }

    /// The composer's text changed: call with `!draft.isEmpty` on every
    /// change. The others see this user typing while it goes on and stop
    /// seeing it when it stops or the message is sent; the client keeps the
    /// contract's 2 s rule (``ChatHistoryClient/setTyping(_:in:)``), so
    /// calling on every keystroke costs a request every 4 s at most.
    public func setTyping(_ typing: Bool) {
        let previous = typingTask
        let client = self.client
        let conversationID = self.conversationID
        typingTask = Task {
            await previous?.value
            // Typing is a hint: a failure is not worth an error on screen.
            _ = try? await client.setTyping(typing, in: conversationID)
        }
    }

    /// Sends `body` with a new `client_id`: a pending row at once, retried
    /// with the same `client_id` on transient failures.
    @discardableResult
    public func send(_ body: String, replyTo: Int64? = nil) -> String {
        let pending = PendingMessage(clientID: UUID().uuidString.lowercased(), body: body, replyTo: replyTo)
        setTyping(false)
        load(screen.send(pending))
        startSending(pending.clientID)
        return pending.clientID
    }

    /// Sends a failed message again, with its original `client_id`.
    public func retry(clientID: String) {
        guard screen.outbox.contains(where: { $0.clientID == clientID }), sendTasks[clientID] == nil else { return }
        startSending(clientID)
    }

    public func discard(clientID: String) {
        sendTasks[clientID]?.cancel()
        screen.discard(clientID: clientID)
    }

    /// Shows who is typing as another source says (the live feed does it by itself).
    public func typingDidChange(_ users: [String]) {
        screen.typingDidChange(users)
    }

    /// The app goes to the background: the feed stops (a parked long-poll
    /// would be cut anyway), this user stops typing, and the read marker
    /// is sent now. Sends go on.
    public func suspend() {
        isSuspended = true
        feedTask?.cancel()
        feedTask = nil
        screen.feedDidStop()
        setTyping(false)
        readTask?.cancel()
        readTask = nil
        if let upTo = screen.readMarkerToSend {
            readTask = Task { [weak self] in await self?.sendReadMarker(upTo) }
        }
    }

    /// Back from the background: the feed resumes where it stopped; a gap
    /// larger than the window reopens at the newest page instead of
    /// replaying it.
    public func resume() {
        isSuspended = false
        if !screen.window.isLoaded {
            if !screen.isOpening { open() }
        } else {
            startFeed()
        }
    }

    /// Stops everything (the screen is gone).
    public func close() {
        isSuspended = true
        setTyping(false)
        feedTask?.cancel()
        readTask?.cancel()
        for task in sendTasks.values { task.cancel() }
        for task in pageTasks.values { task.cancel() }
        feedTask = nil
        readTask = nil
    }

    // MARK: - Networking

    /// Fetches `request`'s page. A reopen the feed asked for (`retrying`:
    /// after a reset or a long gap, the feed waits for it) waits out
    /// transient failures (a 429's `Retry-After`, backoff while the server
    /// is away) instead of leaving the screen without a feed.
    private func load(_ request: WindowRequest?, retrying: Bool = false) {
        guard let request else { return }
        let conversationID = self.conversationID
        let client = self.client
        pageTasks[request] = Task { [weak self] in
            var failures = 0
            while true {
                do {
                    let page = try await client.page(of: conversationID, request.pageRequest)
                    await self?.didLoad(page, for: request)
                    return
                } catch let error as HistoryClientError where retrying && error.isTransient {
                    self?.screen.report(Self.describe(error))
                    let policy = client.configuration.reconnect
                    let delay: Duration
                    if let retryAfter = error.retryAfter {
                        delay = policy.delay(retryAfter: retryAfter, randomFraction: .random(in: 0..<1))
                    } else {
                        failures += 1
                        delay = policy.delay(afterFailures: failures, randomFraction: .random(in: 0..<1))
                    }
                    do { try await Task.sleep(for: delay) } catch { return }
                } catch {
                    guard let self else { return }
                    self.pageTasks[request] = nil
                    self.screen.requestDidFail(request, reason: Self.describe(error))
                    // The feed may have stopped for this page (a reset while
                    // it was in flight): it goes on, and asks again if it must.
                    if self.feedTask == nil, !self.isSuspended, !(error is CancellationError) { self.startFeed() }
                    return
                }
            }
        }
    }

    private func didLoad(_ page: HistoryPage, for request: WindowRequest) async {
        pageTasks[request] = nil
        let replacesRows: Bool
        switch request.cursor {
        case .newest, .around, .aroundTime: replacesRows = true
        case .after: replacesRows = page.reset == true
        default: replacesRows = false
        }
        screen.receive(page, for: request)
        if replacesRows || feedSince == nil {
            feedSince = Swift.max(feedSince ?? page.version, page.version)
            if replacesRows { feedSince = page.version }
        }
        await performRefreshes()
        if feedTask == nil, !isSuspended { startFeed() } else if replacesRows, !isSuspended { startFeed() }
    }

    private func performRefreshes() async {
        for refresh in screen.takePendingRefreshes() {
            var query = refresh.query(limit: 1000)
            do {
                while true {
                    let batch = try await client.events(of: conversationID, query)
                    if batch.reset {
                        // Too much changed in those rows to replay: the newest page instead.
                        reopenAfterReset()
                        return
                    }
                    screen.receiveRefresh(batch.events)
                    guard batch.hasMore else { break }
                    query.since = batch.version
                }
            } catch {
                screen.report(Self.describe(error))
            }
        }
    }

    /// The server would not replay what changed: the rows are replaced by
    /// the newest page, and the feed restarts from its version (a newest
    /// page already in flight does the same when it arrives).
    private func reopenAfterReset() {
        feedTask?.cancel()
        feedTask = nil
        load(screen.reopen(), retrying: true)
    }

    /// (Re)starts the live feed from ``feedSince``, in pages of the
    /// window's capacity so a long gap is recognised on its first page,
    /// with who is typing.
    private func startFeed() {
        feedTask?.cancel()
        guard let since = feedSince else { return }
        let stream = client.events(of: conversationID, since: since, limit: screen.window.configuration.capacity,
                                   typing: true)
        feedTask = Task { [weak self] in
            do {
                for try await batch in stream.batches {
                    guard let self else { return }
                    if batch.reset {
                        self.feedTask = nil
                        self.load(self.screen.receive(batch), retrying: true)
                        return
                    }
                    if let reopen = self.screen.receive(batch) {
                        // Too much changed: the newest page replaces the rows,
                        // and the feed restarts from its version.
                        self.feedTask = nil
                        self.load(reopen, retrying: true)
                        return
                    }
                    self.feedSince = batch.version
                    await self.performRefreshes()
                }
            } catch is CancellationError {
            } catch {
                self?.screen.report(Self.describe(error))
                self?.feedTask = nil
            }
        }
    }

    private func startSending(_ clientID: String) {
        sendTasks[clientID] = Task { [weak self] in
            await self?.sendLoop(clientID)
            self?.sendTasks[clientID] = nil
        }
    }

    private func sendLoop(_ clientID: String) async {
        var failures = 0
        while !Task.isCancelled {
            guard let pending = screen.outbox.first(where: { $0.clientID == clientID }) else { return }
            screen.sendWillStart(clientID: clientID)
            do {
                let result = try await client.append(to: conversationID, sender: screen.me, body: pending.body,
                                                     clientID: clientID, replyTo: pending.replyTo)
                screen.sendDidSucceed(clientID: clientID, message: result.message)
                return
            } catch let error as HistoryClientError where error.isTransient {
                failures += 1
                guard failures < maximumSendAttempts else {
                    screen.sendDidFail(clientID: clientID, reason: Self.describe(error))
                    return
                }
                let delay = error.retryAfter
                    ?? client.configuration.reconnect.delay(afterFailures: failures, randomFraction: .random(in: 0..<1))
                do { try await Task.sleep(for: delay) } catch { return }
            } catch is CancellationError {
                return
            } catch {
                screen.sendDidFail(clientID: clientID, reason: Self.describe(error))
                return
            }
        }
    }

    private func scheduleReadMarker() {
        guard let upTo = screen.readMarkerToSend else { return }
        readTask?.cancel()
        let delay = readMarkerDelay
        readTask = Task { [weak self] in
            do { try await Task.sleep(for: delay) } catch { return }
            await self?.sendReadMarker(upTo)
        }
    }

    private func sendReadMarker(_ upTo: Int64) async {
        do {
            let state = try await client.markRead(conversationID, upTo: upTo, as: screen.me ?? "me")
            screen.readMarkerDidMove(to: state.lastReadID ?? upTo)
        } catch {
            // The next report retries; a marker is not worth an error on screen.
        }
    }

    private static func describe(_ error: any Error) -> String {
        (error as? HistoryClientError)?.description ?? "\(error)"
    }
}
