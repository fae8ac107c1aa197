import HTTPCore
import Synchronization
import ToolSupport

/// Everything a virtual user needs, owned by the thread that drives the user (an event loop or its own).
final class UserContext {
    let index: Int
    let connection: LoadConnection
    let stats: LoadStats
    let shard: StatsShard
    let control: RunControl
    let catalog: ConversationCatalog
    let settings: RunSettings
    var random: SplitMix64
    var counters = CheckCounters()
    /// Reused for every page this user reads.
    var page = PageSummary()
    var events = EventsSummary()
    /// Posts this user saw acknowledged, for the read-back at the end.
    var acks: [AckedPost] = []
    var peakWindowMessages = 0
    /// How a callback user's requests go out: set by the run before the user starts.
    var driver: (any RequestDriver)?
    /// Tokens mode: this user's `Authorization` value, minted once and sent
    /// with each of its requests; nil in open mode.
    let authorization: String?

    var log: InvariantLog { stats.invariants }

    init(index: Int, endpoint: ServerEndpoint, stats: LoadStats, control: RunControl, catalog: ConversationCatalog,
         settings: RunSettings, pacer: Pacer?) {
        self.index = index
        self.stats = stats
        shard = stats.shard(for: index)
        self.control = control
        self.catalog = catalog
        self.settings = settings
        random = SplitMix64(seed: settings.seed, stream: UInt64(index) + 1)
        authorization = settings.credentials?.userAuthorization(ofUser: index)
        connection = LoadConnection(endpoint: endpoint, shard: shard, timeout: .seconds(Int64(settings.longPollSeconds) + 30),
                                    pacer: pacer, authorization: authorization, acceptsGzip: settings.acceptsGzip)
    }

    /// Reads one page, scans and checks it; `then` gets the coverage on the
    /// user's thread, nil when the request or the scan failed (already counted).
    /// Merge the answer into a span with ``merge(_:into:label:)``.
    /// - Parameter unreadOf: a user id: the page's ``PageSummary/countsAsUnread`` is filled for that user.
    func fetchPage(_ entry: ConversationCatalog.Entry, _ cursor: LoadCursor, limit: Int, label: String,
                   unreadOf user: [UInt8]? = nil, then: @escaping (PageChecks.Coverage?) -> Void) {
        let target = entry.messagesPrefix + cursor.query(limit: limit)
        send(LoadRequest(target: target, kind: cursor.kind)) { [self] response in
            guard let response, response.status == 200 else { return then(nil) }
            then(checkPage(response.body, target: target, cursor, limit: limit, label: label, unreadOf: user))
        }
    }

    /// Reads a page again with the `ETag` held (when `--no-etag` is not
    /// given): `then` gets the answer's status and new tag, and for a 200
    /// its checked coverage. A 304 is counted under "304 revalidations".
    func revalidatePage(_ entry: ConversationCatalog.Entry, _ cursor: LoadCursor, limit: Int, label: String,
                        etag: String?, then: @escaping (_ status: Int?, _ etag: String?, PageChecks.Coverage?) -> Void) {
        let target = entry.messagesPrefix + cursor.query(limit: limit)
        let condition = settings.sendsETags ? etag : nil
        send(LoadRequest(target: target, kind: .revalidatedPage, accepted: 200...304, ifNoneMatch: condition)) { [self] response in
            guard let response, response.status == 200 || response.status == 304 else { return then(response?.status, nil, nil) }
            counters.revalidations += 1
            if response.status == 304 {
                counters.notModified += 1
                if condition == nil || response.headers["ETag"] != condition {
                    log.violation(.pageFields, "\(label) GET \(target): 304 to If-None-Match \(condition ?? "nil") with ETag \(response.headers["ETag"] ?? "none")")
                }
                return then(304, condition, nil)
            }
            let coverage = checkPage(response.body, target: target, cursor, limit: limit, label: label, unreadOf: nil)
            then(200, response.headers["ETag"], coverage)
        }
    }

    /// Sends through this user's driver (callback users).
    func send(_ request: LoadRequest, then: @escaping (HTTPClientResponse?) -> Void) {
        driver?.send(request, then: then)
    }

    /// The due time of the next request (open-loop slot, or now).
    func takeSlot() -> UInt64 {
        driver?.takeSlot() ?? connection.nextSlot()
    }

    private func checkPage(_ body: [UInt8], target: String, _ cursor: LoadCursor, limit: Int,
                           label: String, unreadOf user: [UInt8]?) -> PageChecks.Coverage? {
        do {
            try page.scan(body, unreadOf: user)
        } catch {
            log.violation(.responseShape, "\(label) GET \(target): \(error)")
            return nil
        }
        return PageChecks.check(page, cursor: cursor, limit: limit, context: "\(label) \(target)",
                                log: log, counters: &counters)
    }

    /// Merges the last page read into `span`, logging disagreements.
    func merge(_ coverage: PageChecks.Coverage, into span: inout KnownSpan, label: @autoclosure () -> String) {
        PageChecks.merge(page, coverage, into: &span, context: label(), log: log, counters: &counters)
    }

    /// Folds this user's counters into its shard (now and then, and at the end).
    func flush() {
        let peak = peakWindowMessages
        shard.state.withLock { state in
            counters.flush(into: &state)
            state.peakWindowMessages = max(state.peakWindowMessages, peak)
        }
    }

    func randomEntry(from entries: [ConversationCatalog.Entry]) -> ConversationCatalog.Entry {
        entries[Int.random(in: 0..<entries.count, using: &random)]
    }
}

/// A post the server acknowledged with 2xx: it must be readable at the end.
struct AckedPost: Sendable, Hashable {
    var conversation: Int
    var id: Int64
    var clientID: String
}

/// The settings every virtual user reads.
struct RunSettings: Sendable {
    var pageSize = 50
    /// Runs that time or check posts by their answers set this; posts
    /// record their answers' arrival in it.
    var postAckTimes: PostAckTimes?
    var seed: UInt64 = 1
    /// How far back a scrollback user scrolls at most, in pages.
    var maximumScrollPages = 12
    /// MessageWindow capacity in pages.
    var windowPages = 5
    /// `get`: the target every request asks for.
    var rawPath = "/"
    /// Longest long-poll wait, in seconds.
    var longPollSeconds = 10
    /// How many conversations posts and tails share.
    var liveConversations = 16
    /// Every n-th post is repeated with its client_id to check idempotency.
    var retryEvery = 25
    /// Tokens mode: each user sends its own token; nil is open mode.
    var credentials: LoadCredentials?
    /// `Accept-Encoding: gzip` on every request (`--no-gzip` turns it off).
    var acceptsGzip = true
    /// `revalidate`: pages re-read with `If-None-Match` (`--no-etag` turns it off).
    var sendsETags = true
    /// `inbox` in open mode: virtual user i is `load-user-NNNN`, i mod this
    /// (the users `seed --add-members` made members of every conversation).
    var inboxUsers = 64
    /// `inbox`: at most this many inbox pages per walk.
    var inboxPages = 8

    /// The user id virtual user `index` acts as in the `inbox` scenario,
    /// and how it names itself in paths (`me` with a token).
    func inboxUser(ofUser index: Int) -> (id: String, path: String) {
        if let credentials { return (LoadCredentials.subject(ofUser: index, members: credentials.members), "me") }
        let id = LoadCredentials.subject(ofUser: index, members: inboxUsers)
        return (id, id)
    }
}
