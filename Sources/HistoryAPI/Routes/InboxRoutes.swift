import HTTPCore
import HistoryAccess
import HistoryStore

/// A user's inbox: `GET /v1/users/{uid}/conversations` (the conversations
/// it is a member of, most recent message first, keyset-paged) and
/// `GET /v1/users/{uid}/events` (what changed in them since an activity,
/// long-polled when `wait` is given).
///
/// `{uid}` may be `me`; a user token may only name itself (403), admins
/// and open mode anyone. Both are reads: rate-limited as reads.
struct InboxRoutes {
    /// Cursors the store hands out are a few dozen characters; anything far
    /// longer is not one of them, and is refused before the store decodes it.
    static let maximumCursorLength = 256

    let environment: RouteEnvironment

    func register(in router: inout Router) {
        router.add(.get, "/v1/users/{uid}/conversations") { request throws(APIError) in try conversations(request) }
        router.add(.get, "/v1/users/{uid}/events") { request throws(APIError) in try events(request) }
    }

    /// `?limit=L&cursor=C`: one page of the inbox within the response
    /// budget. When fewer rows fit than the store read, the page is read
    /// again with that many, so `next_cursor` continues right after the last
    /// row written (the store's cursor describes the rows it read, and only
    /// it can make one).
    private func conversations(_ request: APIRequest) throws(APIError) -> Answer {
        let user = try environment.pathUser(request, at: 0)
        try environment.authorize(request, .readInbox(owner: user))
        var query = try Self.inboxQuery(request.query)
        while true {
            let page = try environment.activityRead(request) { () throws(StoreError) in try environment.store.inbox(of: user, query) }
            switch JSONWriter.inboxPage(page, budget: environment.limits.maximumResponseBytes) {
            case .whole(let json):
                // The rows come from many conversations: tagged by the bytes.
                return request.json(json, etag: .body(json, gzip: request.acceptsGzip))
            case .onlyFirst(let rows):
                // Fewer than asked each time, at least one always fits: this ends.
                query.limit = rows
            }
        }
    }

    /// `?since=A&wait=S&limit=L`: the compacted inbox changes after `A`.
    private func events(_ request: APIRequest) throws(APIError) -> Answer {
        let user = try environment.pathUser(request, at: 0)
        let grant = try environment.authorize(request, .readInbox(owner: user))
        var (query, wait) = try Self.eventsQuery(request.query)
        query.resetAfter = environment.feeds.resetAfter
        let streaming = StreamRequest.wantsStream(request.http)
        if streaming, let cursor = try StreamRequest.lastEventID(request.http) { query.since = cursor }
        let feed = try environment.activityRead(request) { () throws(StoreError) in try environment.store.inboxChanges(of: user, query) }
        let source = InboxFeedSource(store: environment.store, user: user, query: query)
        if streaming {
            return request.later { promise in
                EventStream(promise: promise, caller: grant.caller, feed: source, environment: environment).start(first: feed)
            }
        }
        guard feed.events.isEmpty && !feed.hasMore && !feed.reset && wait > .zero else {
            return request.json(.ok, JSONWriter.inboxFeed(feed, budget: environment.limits.maximumResponseBytes))
        }
        return request.later { promise in
            LongPoll(promise: promise, caller: grant.caller, feed: source, deadline: .now + wait,
                     environment: environment).start(after: feed.activity)
        }
    }

    /// `limit` 1...200 (default 50, `invalid_limit`) and `cursor`, opaque
    /// here (`invalid_cursor` when empty or too long; the store refuses one
    /// it did not make, under the same code).
    static func inboxQuery(_ query: QueryParameters) throws(APIError) -> InboxQuery {
        let limit = try query.integer(InboxQuery.limitRule).map { Int($0) } ?? InboxQuery.defaultLimit
        let cursor = try query.value("cursor", invalid: .invalidCursor)
        if let cursor, cursor.isEmpty || cursor.utf8.count > maximumCursorLength {
            throw APIError(.invalidCursor, "cursor must be the next_cursor of an inbox page, not '\(abbreviated(cursor))'")
        }
        return InboxQuery(cursor: cursor, limit: limit)
    }

    /// `since` (default 0, `invalid_version`), `limit` 1...1000 (default
    /// 100, `invalid_limit`), `wait` as the conversation feed's. `since`
    /// above the current activity is the store's to find.
    static func eventsQuery(_ query: QueryParameters) throws(APIError) -> (InboxChangeQuery, wait: Duration) {
        let since = try query.integer(InboxChangeQuery.sinceRule) ?? 0
        let limit = try query.integer(InboxChangeQuery.limitRule).map { Int($0) } ?? InboxChangeQuery.defaultLimit
        return (InboxChangeQuery(since: since, limit: limit), try EventRoutes.wait(query))
    }
}
