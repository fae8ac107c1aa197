import HistoryClient
import Observation

/// The inbox screen's view model: an ``Inbox`` on the main actor, its pages
/// and its live feed. Foundation and Observation only, so the root
/// package's tests compile this very file (a link to it) and drive it
/// against the server on Linux; BuildingTheInboxScreen.md quotes it.
@MainActor @Observable
final class InboxViewModel {
    private(set) var rows: [HistoryInboxRow] = []
    private(set) var showsBottomSpinner = false
    private(set) var lastError: String?

    private let client: ChatHistoryClient
    private let user: String
    private var inbox: Inbox
    private var loading: Set<InboxRequest> = []
    /// A refresh still to do (see refreshIfStale), kept until it succeeds.
    private var staleSince: Int64?

    init(client: ChatHistoryClient, user: String = "me", configuration: InboxConfiguration = InboxConfiguration()) {
        self.client = client
        self.user = user
        self.inbox = Inbox(configuration: configuration)
    }

    /// The view's `.task`: the first page, then live changes until the task is cancelled.
    func opened() async {
        await perform(.open)
        await followLiveChanges()
    }

    func bottomSpinnerAppeared() async { await perform(.scrollDown) }

    private func perform(_ intent: InboxIntent) async {
        guard let request = inbox.nextRequest(for: intent), loading.insert(request).inserted else { return }
        defer { loading.remove(request) }
        do {
            let page = try await client.inbox(of: user, cursor: request.cursor, limit: request.limit)
            render(inbox.apply(page, for: request))
            try await refreshIfStale()
        } catch {
            lastError = "\(error)"                     // shown above the list, with a retry
        }
    }

    private func followLiveChanges() async {
        while !Task.isCancelled {
            do {
                for try await batch in client.inboxFeed(of: user, since: inbox.activity).batches {
                    if batch.reset {
                        try await reopen(after: batch.activity)
                        break                          // follow again from the first page's activity
                    }
                    render(inbox.apply(batch.events, through: batch.activity))
                    try await refreshIfStale()
                }
            } catch is CancellationError {
                return
            } catch {
                lastError = "\(error)"                 // not transient (access lost): show it
                return
            }
        }
    }

    /// The server would not replay that much: the first page replaces every row.
    private func reopen(after activity: Int64) async throws {
        let request = inbox.reopenRequest
        let page = try await client.inbox(of: user, cursor: request.cursor, limit: request.limit)
        render(inbox.reopen(with: page, after: activity))
    }

    /// A page read before changes the feed already delivered may carry old
    /// rows, or a conversation the user has left since: read the feed again
    /// from that page's activity.
    private func refreshIfStale() async throws {
        if let since = inbox.takePendingRefresh() { staleSince = min(staleSince ?? since, since) }
        while let since = staleSince {
            let answer = try await client.inboxEvents(of: user, since: since, limit: 1000)
            if answer.reset {
                staleSince = nil
                try await reopen(after: answer.activity)
                return
            }
            render(inbox.applyRefresh(answer.events))
            staleSince = answer.hasMore ? answer.activity : nil
        }
    }

    /// SwiftUI finds the moves itself (rows are Identifiable by conversation);
    /// a UIKit list replays `changes` instead.
    private func render(_ changes: [InboxChange]) {
        rows = inbox.rows
        showsBottomSpinner = inbox.hasMore && !inbox.isAtCapacity
        lastError = nil
    }
}
