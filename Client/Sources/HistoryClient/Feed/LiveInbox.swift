/// An ``Inbox`` kept up to date over a ``ChatHistoryClient``: the networking
/// that lives beside the inbox's pure decisions, as ``ConversationFeed`` is
/// for a ``MessageWindow``.
///
/// An actor, so a screen's scroll callbacks and the live feed can call it
/// concurrently: each answer is applied to the inbox it finds when it
/// arrives, and the inbox's rules make that safe (an answer whose cursor was
/// dropped changes nothing, rows keep their highest activity, a page read
/// before the feed's position is refreshed). The same page is never in
/// flight twice.
///
/// ```swift
/// let live = LiveInbox(client: client)
/// let opened = try await live.perform(.open)           // the top 50 rows, [.inserted(...)]
/// Task { try await live.followChanges { update in await render(update) } }
/// let more = try await live.perform(.scrollDown)        // the next page
/// ```
public actor LiveInbox {
    public nonisolated let client: ChatHistoryClient
    /// The user whose inbox this is: `"me"` (the token's subject) by default.
    public nonisolated let user: String
    /// The current state; every ``Update`` carries a copy too.
    public private(set) var inbox: Inbox
    private var inFlight: Set<InboxRequest> = []

    /// What an operation changed, and the inbox after it.
    public struct Update: Sendable {
        public var changes: [InboxChange]
        public var inbox: Inbox

        public init(changes: [InboxChange], inbox: Inbox) {
            self.changes = changes
            self.inbox = inbox
        }
    }

    public init(client: ChatHistoryClient, user: String = "me", configuration: InboxConfiguration = InboxConfiguration()) {
        self.client = client
        self.user = user
        self.inbox = Inbox(configuration: configuration)
    }

    /// Fetches the page `intent` needs (if any) and applies it.
    public func perform(_ intent: InboxIntent) async throws -> Update {
        guard let request = inbox.nextRequest(for: intent), inFlight.insert(request).inserted else {
            return Update(changes: [], inbox: inbox)
        }
        defer { inFlight.remove(request) }
        let page = try await client.inbox(of: user, cursor: request.cursor, limit: request.limit)
        var changes = inbox.apply(page, for: request)
        changes += try await performRefresh()
        return Update(changes: changes, inbox: inbox)
    }

    /// Applies the inbox feed until the calling task is cancelled, calling
    /// `onUpdate` after every answer that changed rows. Opens the inbox
    /// first if no page was loaded yet. The feed resumes by itself across
    /// reconnects and token refreshes and waits out rate limits (see
    /// ``InboxFeed``); when the server answers a reset, the first page is
    /// read again and replaces the rows (``Inbox/reopen(with:after:)``),
    /// and the feed follows from there.
    public func followChanges(onUpdate: @Sendable (Update) async -> Void) async throws {
        let policy = client.configuration.reconnect
        if !inbox.isLoaded {
            await onUpdate(try await withTransientRetry(policy: policy) { try await perform(.open) })
        }
        following: while !Task.isCancelled {
            for try await batch in client.inboxFeed(of: user, since: inbox.activity).batches {
                if batch.reset {
                    await onUpdate(try await withTransientRetry(policy: policy) { try await reopen(after: batch.activity) })
                    continue following
                }
                var changes = inbox.apply(batch.events, through: batch.activity)
                do {
                    changes += try await performRefresh()
                } catch let error as HistoryClientError where error.isTransient {
                    // Kept pending: the next answer or page asks again.
                }
                if !changes.isEmpty {
                    await onUpdate(Update(changes: changes, inbox: inbox))
                }
            }
            return
        }
    }

    /// Reads the first page again and starts the inbox over from it.
    private func reopen(after activity: Int64) async throws -> Update {
        let request = inbox.reopenRequest
        let page = try await client.inbox(of: user, cursor: request.cursor, limit: request.limit)
        let changes = inbox.reopen(with: page, after: activity)
        return Update(changes: changes, inbox: inbox)
    }

    /// Re-reads the changes a stale page may have missed (see ``Inbox/pendingRefresh``).
    private func performRefresh() async throws -> [InboxChange] {
        guard var since = inbox.takePendingRefresh() else { return [] }
        var changes: [InboxChange] = []
        do {
            while true {
                let batch = try await client.inboxEvents(of: user, since: since, limit: 1000)
                if batch.reset {
                    // Too much to replay: the first page again.
                    return changes + (try await reopen(after: batch.activity).changes)
                }
                changes += inbox.applyRefresh(batch.events)
                guard batch.hasMore else { return changes }
                since = batch.activity
            }
        } catch {
            // Keep what is not done for the next operation to retry.
            inbox.pendingRefresh = Swift.min(inbox.pendingRefresh ?? since, since)
            throw error
        }
    }
}
