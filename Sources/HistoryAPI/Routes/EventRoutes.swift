import HTTPCore
import HistoryStore

/// `GET /v1/conversations/{cid}/events?since=V&wait=S&limit=L&min_id=A&max_id=B`:
/// the compacted change feed, long-polled when `wait` is given.
struct EventRoutes {
    /// `wait` is 0...60 seconds (docs/API.md).
    static let maximumWait: Duration = .seconds(60)

    let environment: RouteEnvironment

    func register(in router: inout Router) {
        router.add(.get, "/v1/conversations/{cid}/events") { request throws(APIError) in try events(request) }
    }

    private func events(_ request: APIRequest) throws(APIError) {
        let conversation = try environment.conversationID(request)
        let (query, wait) = try Self.eventsQuery(request.query)
        let feed = try environment.read(request) { () throws(StoreError) in
            try environment.store.changes(in: conversation, query)
        }
        guard feed.events.isEmpty && !feed.hasMore && wait > .zero else {
            request.respond(.ok, json: JSONWriter.changeFeed(feed))
            return
        }
        let poll = LongPoll(request: request, conversation: conversation, query: query,
                            deadline: .now + wait, environment: environment)
        poll.start(afterVersion: feed.version)
    }

    /// `since` (default 0: `invalid_version`), `limit` (1...1000, default 100:
    /// `invalid_limit`), `min_id`/`max_id` (positive, min <= max:
    /// `invalid_id_range`), `wait` (0...60 s, integer or decimal: `invalid_wait`).
    /// `since` above the current version is the store's `invalid_version`.
    static func eventsQuery(_ query: QueryParameters) throws(APIError) -> (ChangeQuery, wait: Duration) {
        var since: Int64 = 0
        if let text = try query.value("since", invalid: APIError.invalidVersion) {
            guard let value = DecimalParser.nonNegativeInt64(text) else {
                throw APIError.invalidVersion("since must be a version, an integer from 0 to the conversation's version, not '\(abbreviated(text))'")
            }
            since = value
        }
        var limit = ChangeQuery.defaultLimit
        if let text = try query.value("limit", invalid: APIError.invalidLimit) {
            guard let value = DecimalParser.positiveInt64(text), value <= ChangeQuery.limitRange.upperBound else {
                throw APIError.invalidLimit("limit must be an integer from \(ChangeQuery.limitRange.lowerBound) to \(ChangeQuery.limitRange.upperBound), not '\(abbreviated(text))'")
            }
            limit = Int(value)
        }
        let minID = try idBound(query, "min_id")
        let maxID = try idBound(query, "max_id")
        if let minID, let maxID, minID > maxID {
            throw APIError.invalidIDRange("min_id (\(minID)) is greater than max_id (\(maxID))")
        }
        var wait: Duration = .zero
        if let text = try query.value("wait", invalid: APIError.invalidWait) {
            guard let value = DecimalParser.seconds(text), value <= maximumWait else {
                throw APIError.invalidWait("wait must be a number of seconds from 0 to 60, not '\(abbreviated(text))'")
            }
            wait = value
        }
        return (ChangeQuery(since: since, limit: limit, minID: minID, maxID: maxID), wait)
    }

    private static func idBound(_ query: QueryParameters, _ name: String) throws(APIError) -> Int64? {
        guard let text = try query.value(name, invalid: APIError.invalidIDRange) else { return nil }
        guard let id = DecimalParser.positiveInt64(text) else {
            throw APIError.invalidIDRange("\(name) must be a message id, an integer from 1 to \(Int64.max), not '\(abbreviated(text))'")
        }
        return id
    }
}
