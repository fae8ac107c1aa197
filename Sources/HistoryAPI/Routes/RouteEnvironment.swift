import HTTPCore
import HistoryStore

/// What every route group needs: the store, the log, the metrics, and the
/// long-polls in flight; plus the path readings all of them share.
struct RouteEnvironment: Sendable {
    let store: any HistoryStore
    let logger: Logger
    let metrics: Metrics
    let longPolls: LongPollRegistry
    let limits: ClientLimits

    /// The `{cid}` of the path. An id that is not a valid conversation id
    /// names no conversation: 404 `conversation_not_found` (docs/API.md, "Validation").
    func conversationID(_ request: APIRequest, at index: Int = 0) throws(APIError) -> ConversationID {
        let segment = request.pathParameters[index]
        guard let segment, let id = ConversationID(segment) else {
            throw APIError.conversationNotFound(segment.map { abbreviated($0, to: 80) })
        }
        return id
    }

    /// The `{id}` of the path: a positive 64-bit integer or 400 `invalid_message_id`.
    func messageID(_ request: APIRequest, at index: Int = 1) throws(APIError) -> Int64 {
        let segment = request.pathParameters[index]
        guard let segment, let id = DecimalParser.positiveInt64(segment) else {
            throw APIError.invalidMessageID(segment.map { abbreviated($0, to: 40) })
        }
        return id
    }

    /// Asks `AccessPolicy` whether the request's caller may do `action` on
    /// `conversation`, looking the caller's role up once (users only: an
    /// admin's is never needed); throws the refusal.
    /// - Returns: the caller and role, for a second decision once more is
    ///   known (the author of a message to edit).
    @discardableResult
    func authorize(_ request: APIRequest, _ action: AccessPolicy.Action,
                   in conversation: ConversationID? = nil) throws(APIError) -> AccessGrant {
        guard let caller = request.caller else {
            // Only routes outside /v1 run without authentication; none of them asks.
            let error = APIError(TokenRejection.missing)
            metrics.recordDenied(status: error.status.code, code: error.code.rawValue)
            throw error
        }
        var role: MemberRole?
        if case .user(let user) = caller, let conversation {
            role = try read(request) { () throws(StoreError) in try store.role(of: user, in: conversation) }
        }
        let grant = AccessGrant(caller: caller, role: role)
        try authorize(grant, action, in: conversation)
        return grant
    }

    /// The second decision on the same grant, without a second lookup.
    func authorize(_ grant: AccessGrant, _ action: AccessPolicy.Action, in conversation: ConversationID?) throws(APIError) {
        let decision = AccessPolicy.decide(action, caller: grant.caller, role: grant.role)
        guard let error = APIError(decision, conversation: conversation) else { return }
        if error.status.code == 403 { metrics.recordDenied(status: error.status.code, code: error.code.rawValue) }
        throw error
    }

    /// The HTTP answer to a store failure; storage details go to the log only.
    func apiError(_ error: StoreError, request: APIRequest) -> APIError {
        switch error {
        case .storage(let code, let message):
            logger.error("storage failure on \(request.http.method) \(request.http.target): SQLite \(code): \(message)")
        case .migration(let reason):
            logger.error("schema problem: \(reason)")
        case .unavailable(let message):
            logger.warning("store unavailable on \(request.http.method) \(request.http.target): \(message)")
        default:
            break
        }
        return APIError(error)
    }

    /// Runs a synchronous store read, mapping its error.
    func read<T>(_ request: APIRequest, _ body: () throws(StoreError) -> T) throws(APIError) -> T {
        do {
            return try body()
        } catch {
            throw apiError(error, request: request)
        }
    }
}

/// Who was let in, and as what: the outcome of `RouteEnvironment.authorize`.
struct AccessGrant: Sendable {
    let caller: Caller
    /// The caller's role in the conversation; nil for an admin.
    let role: MemberRole?

    /// The token's subject when the caller is a user, nil for an admin.
    var user: UserID? {
        if case .user(let user) = caller { user } else { nil }
    }
}
