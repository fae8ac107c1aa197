/// A ``MessageWindow`` kept up to date over a ``ChatHistoryClient``: the
/// networking that lives beside the window's pure decisions.
///
/// An actor, so a screen's scroll callbacks and the live event loop can call
/// it concurrently: each operation applies its answer to the window it finds
/// when the answer arrives, and the window's rules make that safe (a stale
/// page changes nothing, rows keep their highest version, rows read before
/// the feed's position are refreshed). The same request is never in flight
/// twice, so a scroll callback that fires on every frame costs one request.
///
/// ```swift
/// let feed = ConversationFeed(client: client, conversationID: "general")
/// let opened = try await feed.perform(.open)             // [.replaced]
/// Task { try await feed.followEvents { update in await render(update) } }
/// let older = try await feed.perform(.scrollUp)           // [.prepended(count: 50, anchorID: ...)]
/// ```
public actor ConversationFeed {
    public nonisolated let client: ChatHistoryClient
    public nonisolated let conversationID: String
    /// The current state; every ``Update`` carries a copy too.
    public private(set) var window: MessageWindow
    private var inFlight: Set<WindowRequest> = []
    /// Whether a page request is in flight (show a loading row).
    public var isLoading: Bool { !inFlight.isEmpty }
    /// The last failure of ``perform(_:)`` or of the live feed, nil after a
    /// success: a screen shows it (with a retry) instead of swallowing it.
    public private(set) var lastError: (any Error)?
    /// The version of the first page: where the live feed starts.
    private var firstPageVersion: Int64?

    /// What an operation changed, and the window after it.
    public struct Update: Sendable {
        public var changes: [WindowChange]
        public var window: MessageWindow

        public init(changes: [WindowChange], window: MessageWindow) {
            self.changes = changes
            self.window = window
        }
    }

    public init(client: ChatHistoryClient, conversationID: String,
                configuration: MessageWindowConfiguration = MessageWindowConfiguration()) {
        self.client = client
        self.conversationID = conversationID
        self.window = MessageWindow(configuration: configuration)
    }

    /// Does what `intent` needs: fetches the page the window asks for (if
    /// any) and applies it, or makes the local decision (shrinking back to one
    /// page at the bottom while attached).
    public func perform(_ intent: WindowIntent) async throws -> Update {
        guard let request = window.nextRequest(for: intent) else {
            let changes = intent == .reachedBottom ? window.settleAtBottom() : []
            return Update(changes: changes, window: window)
        }
        guard inFlight.insert(request).inserted else { return Update(changes: [], window: window) }
        defer { inFlight.remove(request) }
        do {
            let page = try await client.page(of: conversationID, request.pageRequest)
            if firstPageVersion == nil || request.cursor == .newest { firstPageVersion = page.version }
            var changes = window.apply(page, for: request)
            changes += try await performRefreshes()
            lastError = nil
            return Update(changes: changes, window: window)
        } catch {
            if !(error is CancellationError) { lastError = error }
            throw error
        }
    }

    /// Applies the live feed to the window until the calling task is
    /// cancelled, calling `onUpdate` after every answer that changed rows.
    /// Opens the window first if no page was loaded yet.
    ///
    /// The feed is read in pages of the window's capacity. When a full page
    /// says more is waiting while the window holds the tail (an app back
    /// from the background after an hour), the gap is more than the window
    /// could keep: it reopens at the newest page (``WindowChange/replaced``)
    /// and follows from there, instead of replaying the whole gap. A reset
    /// answer of the server (``HistoryEventBatch/reset``) reopens the same
    /// way, wherever the window is. Rate limits and an absent server are
    /// waited out (the pages it reopens with too); it throws only what will
    /// not pass by itself (the conversation gone, access lost).
    public func followEvents(onUpdate: @Sendable (Update) async -> Void) async throws {
        let policy = client.configuration.reconnect
        if firstPageVersion == nil {
            await onUpdate(try await withTransientRetry(policy: policy) { try await perform(.open) })
        }
        let capacity = window.configuration.capacity
        var since = Swift.max(firstPageVersion ?? 0, window.eventVersion)
        following: while !Task.isCancelled {
            do {
                for try await batch in client.events(of: conversationID, since: since, limit: capacity).batches {
                    let gap = batch.hasMore && batch.events.count >= capacity && window.attachedToTail
                    if batch.reset || gap {
                        let reopened = try await withTransientRetry(policy: policy) { try await perform(.open) }
                        since = Swift.max(firstPageVersion ?? batch.version, batch.version)
                        await onUpdate(reopened)
                        continue following
                    }
                    var changes = window.apply(batch.events, through: batch.version)
                    since = batch.version
                    do {
                        changes += try await performRefreshes()
                    } catch let error as HistoryClientError where error.isTransient {
                        // Kept pending: the next answer or operation asks again.
                        lastError = error
                    }
                    if !changes.isEmpty {
                        await onUpdate(Update(changes: changes, window: window))
                    }
                }
                return
            } catch {
                if !(error is CancellationError) { lastError = error }
                throw error
            }
        }
    }

    /// Re-reads the changes of rows a page brought in stale (see ``WindowRefresh``).
    private func performRefreshes() async throws -> [WindowChange] {
        var changes: [WindowChange] = []
        var refreshes = window.takePendingRefreshes()
        while !refreshes.isEmpty {
            let refresh = refreshes.removeFirst()
            do {
                var query = refresh.query(limit: 1000)
                while true {
                    let batch = try await client.events(of: conversationID, query)
                    if batch.reset {
                        // Too much changed in those rows to replay: the newest page instead.
                        let page = try await client.page(of: conversationID, .newest(limit: window.configuration.pageSize))
                        firstPageVersion = page.version
                        let request = WindowRequest(cursor: .newest, limit: window.configuration.pageSize)
                        window.pendingRefreshes.removeAll()
                        return window.apply(page, for: request)
                    }
                    changes += window.applyRefresh(batch.events)
                    guard batch.hasMore else { break }
                    query.since = batch.version
                }
            } catch {
                // Keep what is not done for the next operation to retry.
                window.pendingRefreshes.insert(contentsOf: [refresh] + refreshes, at: 0)
                throw error
            }
        }
        return changes
    }
}
