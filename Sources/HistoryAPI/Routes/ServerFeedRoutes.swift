import HTTPCore
import HistoryAccess
import HistoryStore

/// `GET /v1/events?since=A&wait=S&limit=L`: the backend feed, every change
/// on the server in `activity` order (docs/API.md, "Live"), long-polled
/// when `wait` is given, streamed (`EventStream`) when the request accepts
/// `text/event-stream`. Administrators only (open mode, admin tokens): a
/// user token is 403 `forbidden`, whatever it names. Never reset: a
/// backend resuming after days must still see every change.
struct ServerFeedRoutes {
    let environment: RouteEnvironment

    func register(in router: inout Router) {
        router.add(.get, "/v1/events") { request throws(APIError) in try events(request) }
    }

    private func events(_ request: APIRequest) throws(APIError) -> Answer {
        let grant = try environment.authorize(request, .readServerFeed)
        var (query, wait) = try Self.eventsQuery(request.query)
        let streaming = StreamRequest.wantsStream(request.http)
        if streaming, let cursor = try StreamRequest.lastEventID(request.http) { query.since = cursor }
        let feed = try environment.activityRead(request) { () throws(StoreError) in try environment.store.serverChanges(query) }
        let source = ServerFeedSource(store: environment.store, query: query)
        if streaming {
            return request.later { promise in
                EventStream(promise: promise, caller: grant.caller, feed: source, environment: environment).start(first: feed)
            }
        }
        guard feed.events.isEmpty && !feed.hasMore && wait > .zero else {
            return request.json(.ok, JSONWriter.serverFeed(feed, budget: environment.limits.maximumResponseBytes))
        }
        return request.later { promise in
            LongPoll(promise: promise, caller: grant.caller, feed: source, deadline: .now + wait,
                     environment: environment).start(after: feed.activity)
        }
    }

    /// `since` (default 0, `invalid_version`), `limit` 1...1000 (default
    /// 100, `invalid_limit`), `wait` as every feed's (`invalid_wait`).
    static func eventsQuery(_ query: QueryParameters) throws(APIError) -> (ServerChangeQuery, wait: Duration) {
        let since = try query.integer(ServerChangeQuery.sinceRule) ?? 0
        let limit = try query.integer(ServerChangeQuery.limitRule).map { Int($0) } ?? ServerChangeQuery.defaultLimit
        return (ServerChangeQuery(since: since, limit: limit), try EventRoutes.wait(query))
    }
}
