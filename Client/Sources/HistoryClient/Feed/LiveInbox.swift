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
    /// reconnects and token refreshes (see ``InboxFeed``).
    public func followChanges(onUpdate: @Sendable (Update) async -> Void) async throws {
        if !inbox.isLoaded {
            await onUpdate(try await perform(.open))
        }
        for try await batch in client.inboxFeed(of: user, since: inbox.activity).batches {
            var changes = inbox.apply(batch.events, through: batch.activity)
            changes += try await performRefresh()
            if !changes.isEmpty {
                await onUpdate(Update(changes: changes, inbox: inbox))
            }
        }
    }

    /// Re-reads the changes a stale page may have missed (see ``Inbox/pendingRefresh``).
    private func performRefresh() async throws -> [InboxChange] {
        guard var since = inbox.takePendingRefresh() else { return [] }
        var changes: [InboxChange] = []
        do {
            while true {
                let batch = try await client.inboxEvents(of: user, since: since, limit: 1000)
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
