import HTTPCore
import HistoryAccess
import HistoryStore
import StrictJSON

/// `PUT /v1/conversations/{cid}/typing` body `{"typing": true|false}` →
/// 204: the caller is typing (for 6 s unless renewed) or stopped
/// (docs/API.md, "Live"). Never stored.
///
/// Who may: the members of the conversation, like a read (a stranger gets
/// the 404 of a missing conversation), decided in the store's snapshot.
/// The typer is the token's subject: a user token's `sub`, or an admin
/// token's when it is a valid user id (a backend typing for a bot). Open
/// mode has no one to show: 403 `forbidden`.
///
/// Every accepted call is 204, a dropped one too (within 2 s of the
/// caller's last accepted call; a `true` beyond the conversation's cap of
/// typers): a client learns nothing from sending more often. A write for
/// the rate limits.
///
/// Where it runs: on PostgreSQL the store gathers typing calls and decides
/// their access together, one statement for many calls on a session of
/// their own (`tellsTypingLater`), so the route only queues the call and
/// never blocks; it takes neither a blocking thread nor a reader from
/// the pages. Elsewhere it reads where a page reads.
struct TypingRoutes {
    let environment: RouteEnvironment

    func register(in router: inout Router) {
        let cost: Router.Cost = environment.store.tellsTypingLater ? .neverWaits : .mayWait
        router.add(.put, "/v1/conversations/{cid}/typing", cost: cost) { request throws(APIError) in try tell(request) }
    }

    private func tell(_ request: APIRequest) throws(APIError) -> Answer {
        let conversation = try environment.conversationID(request)
        let access = try environment.access(request, .readConversation)
        let typing = try Self.typing(in: RequestBody(request.http.body))
        guard let user = try environment.caller(request).subject.flatMap({ UserID($0) }) else {
            throw APIError(.forbidden, "typing is shown under a user id: send a user token (or an admin token whose sub is a user id)")
        }
        // One path for both: on SQLite the completion runs before
        // `tellTyping` returns, on this read-pool thread.
        return request.later { promise in
            environment.store.tellTyping(typing, as: user, in: conversation, access: access) { result in
                promise.complete(result) { _ in promise.resolve(HTTPResponse(status: .noContent)) }
            }
        }
    }

    /// `typing`: a required boolean (`bad_request` otherwise; a body that
    /// is not a JSON object is `invalid_json`).
    static func typing(in body: RequestBody) throws(APIError) -> Bool {
        switch body.fields["typing"] {
        case .bool(let value)?:
            return value
        case nil, .null?:
            throw APIError(.badRequest, "typing is required and must be true or false")
        case let other?:
            throw APIError(.badRequest, "typing must be true or false, not \(other.typeName)")
        }
    }
}
