import HTTPCore
import HistoryAccess
import HistoryStore

/// What every route group needs: the store, the log, the metrics, and the
/// long-polls in flight; plus the path readings all of them share.
struct RouteEnvironment: Sendable {
    let store: any HistoryStore
    let logger: Logger
    let metrics: Metrics
    let longPolls: LongPollRegistry
    let limits: ClientLimits
    /// Streams' length and heartbeat, and the feeds' reset threshold.
    let feeds: FeedSettings
    /// Where work that may wait on the store runs when it cannot block the
    /// server's thread (past its blocking limit, a woken long-poll).
    let readPool: ReadPool
    /// The newest pages as sent, for the next open of each (`NewestPageCache`).
    let newestPages: NewestPageCache

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

    /// Asks `AccessPolicy` whether the request's caller may do `action`,
    /// which is about no one conversation (create, an inbox, metrics);
    /// throws the refusal.
    /// - Returns: the caller, for what it may do next.
    @discardableResult
    func authorize(_ request: APIRequest, _ action: AccessPolicy.Action) throws(APIError) -> AccessGrant {
        let caller = try self.caller(request)
        let grant = AccessGrant(caller: caller)
        let decision = AccessPolicy.decide(action, caller: caller, role: nil)
        if let error = APIError(decision, conversation: nil) {
            if error.status.code == 403 { metrics.recordDenied(status: error.status.code, code: error.code.rawValue) }
            throw error
        }
        return grant
    }

    /// The check of `action` in a conversation, for the store to decide
    /// where the data is: in the snapshot a read serves, inside the
    /// transaction a write commits (docs/API.md, "Exact revocation").
    /// `action` is given the message's author for an edit or delete.
    func access(_ request: APIRequest,
                _ action: @escaping @Sendable (_ author: String?) -> AccessPolicy.Action) throws(APIError) -> AccessCheck {
        let caller = try self.caller(request)
        guard case .user(let user) = caller else { return .admin }
        return AccessCheck(user: user) { role, author in
            AccessPolicy.decide(action(author), caller: caller, role: role).refusal
        }
    }

    /// The same for an action that needs no author.
    func access(_ request: APIRequest, _ action: AccessPolicy.Action) throws(APIError) -> AccessCheck {
        try access(request) { _ in action }
    }

    /// Who asks; only routes outside /v1 run without authentication, and
    /// none of them asks.
    func caller(_ request: APIRequest) throws(APIError) -> Caller {
        guard let caller = request.caller else {
            let error = APIError(TokenRejection.missing)
            metrics.recordDenied(status: error.status.code, code: error.code.rawValue)
            throw error
        }
        return caller
    }

    /// Runs a synchronous store read, mapping its error (`APIRequest.apiError`).
    func read<T>(_ request: APIRequest, _ body: () throws(StoreError) -> T) throws(APIError) -> T {
        do {
            return try body()
        } catch {
            throw request.apiError(error)
        }
    }
}

extension AccessPolicy.Decision {
    /// The store's form of a refusal; nil when allowed.
    var refusal: AccessRefusal? {
        switch self {
        case .allow: nil
        case .conversationNotFound: .notAMember
        case .forbidden: .forbidden
        case .notAuthor: .notAuthor
        case .senderMismatch: .senderMismatch
        }
    }
}

/// Who was let in, and as what: the outcome of `RouteEnvironment.authorize`.
struct AccessGrant: Sendable {
    let caller: Caller

    /// The token's subject when the caller is a user, nil for an admin.
    var user: UserID? {
        if case .user(let user) = caller { user } else { nil }
    }
}
