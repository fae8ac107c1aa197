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
///
/// Written as callbacks: a session is a small state machine (open, scroll
/// up `pagesLeft` pages, page down until attached, settle) that each answer advances.
final class ScrollbackUser: CallbackUser {
    private struct Session {
        var entry: ConversationCatalog.Entry
        var label: String
        var window: MessageWindow
        var top: (version: Int64, newestID: Int64)?
        var walkCounted = false
        var pagesLeft = 0
        var downs = 0
    }

    private var span = KnownSpan()
    private var sessions = 0
    private var session: Session?

    func run(_ context: UserContext) {
        let entries = context.catalog.nonEmpty
        guard !entries.isEmpty else { return }
        // Half the sessions in one of the largest conversations, where scrolling is long.
        let entry: ConversationCatalog.Entry
        if Bool.random(using: &context.random) {
            entry = context.randomEntry(from: Array(context.catalog.largestFirst.prefix(8)))
        } else {
            entry = context.randomEntry(from: entries)
        }
        let pageSize = context.settings.pageSize
        span.clear()
        session = Session(entry: entry, label: "scrollback \(entry.id)", window: MessageWindow(configuration: MessageWindowConfiguration(
            pageSize: pageSize, capacity: pageSize * context.settings.windowPages)))
        guard let open = session?.window.nextRequest(for: .open) else { return endSession(context) }
        load(open, context) { [self] loaded in
            guard loaded else { return endSession(context) }
            session?.pagesLeft = Int.random(in: 1...max(1, context.settings.maximumScrollPages), using: &context.random)
            scrollUp(context)
        }
    }

    private func scrollUp(_ context: UserContext) {
        guard let pagesLeft = session?.pagesLeft, pagesLeft > 0,
              let request = session?.window.nextRequest(for: .scrollUp) else { return scrollDown(context) }
        session?.pagesLeft = pagesLeft - 1
        load(request, context) { [self] loaded in loaded ? scrollUp(context) : endSession(context) }
    }

    /// Back to the bottom: page down while detached (the first `after&window`
    /// usually answers the newest page with reset), then settle locally.
    private func scrollDown(_ context: UserContext) {
        guard var current = session else { return endSession(context) }
        if !current.window.attachedToTail, current.downs < 2 * context.settings.windowPages + 2 {
            guard let request = current.window.nextRequest(for: .scrollDown) ?? current.window.nextRequest(for: .reachedBottom) else {
                return endSession(context)
            }
            session?.downs += 1
            load(request, context) { [self] loaded in loaded ? scrollDown(context) : endSession(context) }
            return
        }
        _ = current.window.settleAtBottom()
        checkWindow(current.window, context, label: current.label)
        if current.window.attachedToTail && current.window.messages.count > context.settings.pageSize {
            context.log.violation(.windowBounded, "\(current.label): \(current.window.messages.count) messages left at the bottom after the reset")
        }
        session = current
        endSession(context)
    }

    private func endSession(_ context: UserContext) {
        session = nil
        sessions += 1
        if sessions % 8 == 0 { context.flush() }
        run(context)
    }

    /// Reads the page the window asks for, checks it, and feeds it to the window; `then(false)` when it failed.
    private func load(_ request: WindowRequest, _ context: UserContext, then: @escaping (Bool) -> Void) {
        guard let current = session else { return then(false) }
        guard let cursor = LoadCursor(request) else { return then(false) }
        let entry = current.entry, label = current.label
        context.fetchPage(entry, cursor, limit: request.limit, label: label) { [self] coverage in
            guard let coverage, session != nil else { return then(false) }
            context.merge(coverage, into: &span, label: "\(label) \(cursor.query(limit: request.limit))")
            let summary = context.page
            if case .newest = cursor, let newest = summary.ids.last { session?.top = (summary.version, newest) }
            if summary.reset == true, let newest = summary.ids.last { session?.top = (summary.version, newest) }
            _ = session?.window.apply(Self.historyPage(summary, conversation: entry.id), for: request)
            if let window = session?.window { checkWindow(window, context, label: label) }
            guard session?.walkCounted == false, let top = session?.top else { return then(true) }
            countWalk(top: top, entry: entry, context, label: label) { [self] counted in
                if counted { session?.walkCounted = true }
                then(true)
            }
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
    /// `then(true)` once the count was compared.
    private func countWalk(top: (version: Int64, newestID: Int64), entry: ConversationCatalog.Entry,
                           _ context: UserContext, label: String, then: @escaping (Bool) -> Void) {
        guard span.reachesFirst, span.upper == top.newestID, span.versions == top.version...top.version else { return then(false) }
        if entry.version == top.version {
            return then(compareWalk(expected: entry.messageCount, version: top.version, context, label: label))
        }
        context.send(LoadRequest(target: "/v1/conversations/\(entry.id)", kind: .conversation)) { [self] response in
            guard let response, response.status == 200, let current = try? ConversationCatalog.Entry(id: entry.id, body: response.body),
                  current.version == top.version else { return then(false) }
            then(compareWalk(expected: current.messageCount, version: top.version, context, label: label))
        }
    }

    private func compareWalk(expected: Int64, version: Int64, _ context: UserContext, label: String) -> Bool {
        context.counters.walksCounted += 1
        if Int64(span.ids.count) != expected {
            context.log.violation(.walkCount, "\(label): a walk from the newest page to the first message at version \(version) "
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
    /// Nil for a jump by time, which the scrollback user never makes.
    init?(_ request: WindowRequest) {
        switch request.cursor {
        case .newest: self = .newest
        case .before(let id): self = .before(id)
        case .after(let id): self = request.window.map { .window(after: id, window: $0) } ?? .after(id)
        case .between(let after, let before): self = .between(after: after, before: before)
        case .around(let id): self = .around(id)
        case .aroundTime: return nil
        }
    }
}
