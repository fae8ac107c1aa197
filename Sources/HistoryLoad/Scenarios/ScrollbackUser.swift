import HTTPCore
import Foundation
import HistoryClient

/// A chat screen driven by the client library's `MessageWindow`: it opens
/// the newest page, scrolls back a random number of pages, comes back down
/// to the bottom so the window resets (locally when still attached to the
/// tail, else through `after&window`), and starts over in another conversation.
///
/// Every page is checked on its own and against what this user read before
/// in the same session (`KnownSpan`); a session that reads a whole
/// conversation at one version also checks the count of ids it saw.
final class ScrollbackUser: VirtualUser {
    private var span = KnownSpan()
    private var sessions = 0

    func step(_ context: UserContext) {
        let entries = context.catalog.nonEmpty
        guard !entries.isEmpty else { return }
        // Half the sessions in one of the largest conversations, where scrolling is long.
        let entry: ConversationCatalog.Entry
        if Bool.random(using: &context.random) {
            entry = context.randomEntry(from: Array(context.catalog.largestFirst.prefix(8)))
        } else {
            entry = context.randomEntry(from: entries)
        }
        runSession(in: entry, context)
        sessions += 1
        if sessions % 8 == 0 { context.flush() }
    }

    private func runSession(in entry: ConversationCatalog.Entry, _ context: UserContext) {
        let pageSize = context.settings.pageSize
        var window = MessageWindow(configuration: MessageWindowConfiguration(
            pageSize: pageSize, capacity: pageSize * context.settings.windowPages))
        span.clear()
        var top: (version: Int64, newestID: Int64)?
        var walkCounted = false
        let label = "scrollback \(entry.id)"

        func load(_ request: WindowRequest) -> Bool {
            let cursor = LoadCursor(request)
            guard let coverage = context.fetchPage(entry, cursor, limit: request.limit, label: label) else { return false }
            context.merge(coverage, into: &span, label: "\(label) \(cursor.query(limit: request.limit))")
            let summary = context.page
            if case .newest = cursor, let newest = summary.ids.last { top = (summary.version, newest) }
            if summary.reset == true, let newest = summary.ids.last { top = (summary.version, newest) }
            _ = window.apply(Self.historyPage(summary, conversation: entry.id), for: request)
            checkWindow(window, context, label: label)
            if !walkCounted, let top { walkCounted = countWalk(top: top, entry: entry, context, label: label) }
            return true
        }

        guard context.control.shouldContinue, let open = window.nextRequest(for: .open), load(open) else { return }
        let pages = Int.random(in: 1...max(1, context.settings.maximumScrollPages), using: &context.random)
        for _ in 0..<pages {
            guard context.control.shouldContinue, let request = window.nextRequest(for: .scrollUp) else { break }
            guard load(request) else { return }
        }
        // Back to the bottom: page down while detached (the first `after&window`
        // usually answers the newest page with reset), then settle locally.
        var downs = 0
        while !window.attachedToTail, downs < 2 * context.settings.windowPages + 2, context.control.shouldContinue {
            guard let request = window.nextRequest(for: .scrollDown) ?? window.nextRequest(for: .reachedBottom),
                  load(request) else { return }
            downs += 1
        }
        _ = window.settleAtBottom()
        checkWindow(window, context, label: label)
        if window.attachedToTail && window.messages.count > pageSize {
            context.log.violation(.windowBounded, "\(label): \(window.messages.count) messages left at the bottom after the reset")
        }
    }

    private func checkWindow(_ window: MessageWindow, _ context: UserContext, label: String) {
        context.counters.windowChecks += 1
        let messages = window.messages
        context.peakWindowMessages = max(context.peakWindowMessages, messages.count)
        if messages.count > window.configuration.capacity {
            context.log.violation(.windowBounded, "\(label): \(messages.count) messages over capacity \(window.configuration.capacity)")
        }
        for i in messages.indices.dropFirst() where messages[i].id <= messages[i - 1].id {
            context.log.violation(.windowBounded, "\(label): window id \(messages[i].id) after \(messages[i - 1].id)")
            break
        }
    }

    /// When this session's pages cover the whole conversation at one version,
    /// the number of ids seen must be its `message_count` at that version.
    /// - Returns: true once the count was compared.
    private func countWalk(top: (version: Int64, newestID: Int64), entry: ConversationCatalog.Entry,
                           _ context: UserContext, label: String) -> Bool {
        guard span.reachesFirst, span.upper == top.newestID, span.versions == top.version...top.version else { return false }
        var expected: Int64?
        if entry.version == top.version {
            expected = entry.messageCount
        } else if let response = context.connection.perform(.get, "/v1/conversations/\(entry.id)", kind: .conversation),
                  response.status == 200, let current = try? ConversationCatalog.Entry(id: entry.id, body: response.body),
                  current.version == top.version {
            expected = current.messageCount
        }
        guard let expected else { return false }
        context.counters.walksCounted += 1
        if Int64(span.ids.count) != expected {
            context.log.violation(.walkCount, "\(label): a walk from the newest page to the first message at version \(top.version) "
                                  + "saw \(span.ids.count) ids, message_count is \(expected)")
        }
        return true
    }

    private static let epoch = Date(timeIntervalSince1970: 0)

    /// The window only looks at ids and versions: the rest stays empty, so
    /// driving it costs no decoding.
    static func historyPage(_ summary: PageSummary, conversation: String) -> HistoryPage {
        HistoryPage(messages: summary.ids.map {
                        HistoryMessage(id: $0, conversationID: conversation, sender: "", body: "", createdAt: epoch,
                                       version: summary.version)
                    },
                    hasOlder: summary.hasOlder, hasNewer: summary.hasNewer, version: summary.version,
                    anchor: summary.anchor.map { HistoryPage.Anchor(id: $0.id, found: $0.found, index: $0.index) },
                    reset: summary.reset)
    }
}

extension LoadCursor {
    init(_ request: WindowRequest) {
        switch request.cursor {
        case .newest: self = .newest
        case .before(let id): self = .before(id)
        case .after(let id): self = request.window.map { .window(after: id, window: $0) } ?? .after(id)
        case .between(let after, let before): self = .between(after: after, before: before)
        case .around(let id): self = .around(id)
        }
    }
}
