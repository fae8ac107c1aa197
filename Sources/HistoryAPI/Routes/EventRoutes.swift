import HTTPCore
import HistoryAccess
import HistoryStore

/// `GET /v1/conversations/{cid}/events?since=V&wait=S&limit=L&min_id=A&max_id=B`:
/// the compacted change feed, long-polled when `wait` is given, streamed
/// (`EventStream`) when the request accepts `text/event-stream`.
struct EventRoutes {
    /// `wait` is 0...60 seconds (docs/API.md, "Events").
    static let maximumWait: Duration = .seconds(60)

    let environment: RouteEnvironment

    func register(in router: inout Router) {
        router.add(.get, "/v1/conversations/{cid}/events") { request throws(APIError) in try events(request) }
    }

    private func events(_ request: APIRequest) throws(APIError) -> Answer {
        let conversation = try environment.conversationID(request)
        let caller = try environment.caller(request)
        let access = try environment.access(request, .readEvents)
        var (query, wait) = try Self.eventsQuery(request.query)
        query.resetAfter = environment.feeds.resetAfter
        let withTyping = try Self.typingFlag(request.query)
        let streaming = StreamRequest.wantsStream(request.http)
        if streaming, let cursor = try StreamRequest.lastEventID(request.http) { query.since = cursor }
        let feed = try environment.read(request) { () throws(StoreError) in
            try environment.store.changes(in: conversation, query, access: access)
        }
        let source = ConversationFeedSource(store: environment.store, conversation: conversation, query: query,
                                            caller: caller, access: access)
        if streaming {
            return request.later { promise in
                let stream = EventStream(promise: promise, caller: caller, feed: source, environment: environment)
                followTyping(in: conversation, on: stream)
                stream.start(first: feed)
            }
        }
        let typers = withTyping ? environment.store.typers(in: conversation) : nil
        guard feed.events.isEmpty && !feed.hasMore && !feed.reset && wait > .zero else {
            let budget = environment.limits.maximumResponseBytes
            return request.json(.ok, typers.map { JSONWriter.changeFeed(feed, typing: $0, budget: budget) }
                ?? JSONWriter.changeFeed(feed, budget: budget))
        }
        return request.later { promise in
            if let typers {
                LongPoll(promise: promise, caller: caller, feed: TypingFeedSource(events: source, baseline: typers),
                         deadline: .now + wait, environment: environment).start(after: feed.version)
            } else {
                LongPoll(promise: promise, caller: caller, feed: source, deadline: .now + wait,
                         environment: environment).start(after: feed.version)
            }
        }
    }

    /// `typing`: `1` adds who is typing to the answer and answers a
    /// long-poll when that list changes; `0` or absent, nothing changes.
    /// Anything else: 400 `bad_request`.
    static func typingFlag(_ query: QueryParameters) throws(APIError) -> Bool {
        switch try query.value("typing", invalid: .badRequest) {
        case nil, "0": false
        case "1": true
        case let other?: throw APIError(.badRequest, "typing must be 1 or 0, not '\(abbreviated(other))'")
        }
    }

    /// `since` (default 0: `invalid_version`), `limit` (1...1000, default 100:
    /// `invalid_limit`), `min_id`/`max_id` (positive, min <= max:
    /// `invalid_id_range`) under `ChangeQuery`'s rules, then `wait` (0...60 s,
    /// integer or decimal: `invalid_wait`), which only this layer knows.
    /// `since` above the current version is the store's `invalid_version`.
    static func eventsQuery(_ query: QueryParameters) throws(APIError) -> (ChangeQuery, wait: Duration) {
        let since = try query.integer(ChangeQuery.sinceRule) ?? 0
        let limit = try query.integer(ChangeQuery.limitRule).map { Int($0) } ?? ChangeQuery.defaultLimit
        let minID = try query.integer(ChangeQuery.minIDRule)
        let maxID = try query.integer(ChangeQuery.maxIDRule)
        let changeQuery = ChangeQuery(since: since, limit: limit, minID: minID, maxID: maxID)
        try APIError.enforcing { () throws(RuleViolation) in try changeQuery.check() }
        return (changeQuery, try wait(query))
    }

    /// `wait`: 0...60 seconds, integer or decimal (`invalid_wait`), 0 when
    /// absent; the same for every feed that parks.
    static func wait(_ query: QueryParameters) throws(APIError) -> Duration {
        guard let text = try query.value("wait", invalid: .invalidWait) else { return .zero }
        guard let value = DecimalParser.seconds(text), value <= maximumWait else {
            throw APIError(.invalidWait, "wait must be a number of seconds from 0 to 60, not '\(abbreviated(text))'")
        }
        return value
    }
}
