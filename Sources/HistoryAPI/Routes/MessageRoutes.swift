import HTTPCore
import HistoryStore

/// The messages of a conversation: append, page, edit, delete.
struct MessageRoutes {
    let environment: RouteEnvironment

    func register(in router: inout Router) {
        router.add(.post, "/v1/conversations/{cid}/messages") { request throws(APIError) in try append(request) }
        router.add(.get, "/v1/conversations/{cid}/messages") { request throws(APIError) in try page(request) }
        router.add(.patch, "/v1/conversations/{cid}/messages/{id}") { request throws(APIError) in try edit(request) }
        router.add(.delete, "/v1/conversations/{cid}/messages/{id}") { request throws(APIError) in try delete(request) }
    }

    // MARK: - Append

    /// Body `{"sender","body","client_id"?,"reply_to"?}`: 201 with the new
    /// message, or 200 with the original when `client_id` was used before.
    /// A user's `sender` is its token's `sub`: the body may leave it out,
    /// and naming anyone else is 403 `sender_mismatch`; an admin names the
    /// sender, as before tokens existed.
    private func append(_ request: APIRequest) throws(APIError) {
        let conversation = try environment.conversationID(request)
        let grant = try environment.authorize(request, .append(sender: nil), in: conversation)
        let body = try RequestBody(request.http.body)
        let sender: String
        if let user = grant.user {
            let given = try body.optionalString(.sender)
            try environment.authorize(grant, .append(sender: given), in: conversation)
            sender = user.rawValue
        } else {
            sender = try body.requiredString(.sender)
        }
        let message = NewMessage(sender: sender,
                                 body: try body.requiredString(.body),
                                 clientID: try body.optionalString(.clientID),
                                 replyTo: try body.optionalPositiveInt64(.replyTo))
        try APIError.enforcing { () throws(RuleViolation) in try MessageRules.check(message) }
        environment.store.append(message, to: conversation) { result in
            switch result {
            case .success(.created(let message)):
                request.respond(.created, json: JSONWriter.message(message))
            case .success(.existing(let message)):
                request.respond(.ok, json: JSONWriter.message(message))
            case .failure(let error):
                request.fail(environment.apiError(error, request: request))
            }
        }
    }

    // MARK: - Page

    /// The hot path: parse, one keyset read, one encode, no hop.
    private func page(_ request: APIRequest) throws(APIError) {
        let conversation = try environment.conversationID(request)
        try environment.authorize(request, .readPages, in: conversation)
        var query = try Self.pageQuery(request.query)
        query.byteBudget = environment.limits.maximumResponseBytes
        let page = try environment.read(request) { () throws(StoreError) in
            try environment.store.page(of: conversation, query)
        }
        request.respond(.ok, json: JSONWriter.page(page, budget: environment.limits.maximumResponseBytes,
                                                   trim: PageTrim(query, reset: page.reset)))
    }

    /// `limit`, `before`, `after`, `around` and `window` as docs/API.md
    /// "Pages" defines them, under `PageQuery`'s rules. Checked in this
    /// order, so the first problem named is the most basic one: each value's
    /// syntax and range (`invalid_cursor`, `invalid_limit`, `invalid_window`),
    /// then `around` beside another cursor (`conflicting_cursors`, which
    /// `PageCursor` cannot even hold), then the query's own rules (`window`
    /// beside anything but a lone `after`: `invalid_window`).
    static func pageQuery(_ query: QueryParameters) throws(APIError) -> PageQuery {
        let before = try query.integer(PageQuery.beforeRule)
        let after = try query.integer(PageQuery.afterRule)
        let around = try query.integer(PageQuery.aroundRule)
        let limit = try query.integer(PageQuery.limitRule).map { Int($0) } ?? PageQuery.defaultLimit
        let window = try query.integer(PageQuery.windowRule).map { Int($0) }
        if around != nil && (before != nil || after != nil) {
            throw APIError(.conflictingCursors, "around cannot be combined with before or after")
        }
        let pageCursor: PageCursor
        switch (before, after, around) {
        case (let before?, let after?, nil): pageCursor = .between(after: after, before: before)
        case (let before?, nil, nil): pageCursor = .before(before)
        case (nil, let after?, nil): pageCursor = .after(after)
        case (nil, nil, let around?): pageCursor = .around(around)
        default: pageCursor = .newest
        }
        let pageQuery = PageQuery(cursor: pageCursor, limit: limit, window: window)
        try APIError.enforcing { () throws(RuleViolation) in try pageQuery.check() }
        return pageQuery
    }

    // MARK: - Edit and delete

    /// Body `{"body"}`: 200 with the message and its `edited_at`.
    /// A user edits its own messages only.
    private func edit(_ request: APIRequest) throws(APIError) {
        let conversation = try environment.conversationID(request)
        let grant = try environment.authorize(request, .edit(author: nil), in: conversation)
        let messageID = try environment.messageID(request)
        let text = try RequestBody(request.http.body).requiredString(.body)
        try APIError.enforcing { () throws(RuleViolation) in try MessageRules.checkBody(text) }
        if grant.user != nil {
            let author = try author(of: messageID, in: conversation, request: request)
            try environment.authorize(grant, .edit(author: author), in: conversation)
        }
        environment.store.edit(messageID: messageID, in: conversation, body: text) { result in
            switch result {
            case .success(let message): request.respond(.ok, json: JSONWriter.message(message))
            case .failure(let error): request.fail(environment.apiError(error, request: request))
            }
        }
    }

    /// 200 with the tombstone; a tombstone deleted again is answered unchanged.
    /// A user deletes its own messages only.
    private func delete(_ request: APIRequest) throws(APIError) {
        let conversation = try environment.conversationID(request)
        let grant = try environment.authorize(request, .delete(author: nil), in: conversation)
        let messageID = try environment.messageID(request)
        if grant.user != nil {
            let author = try author(of: messageID, in: conversation, request: request)
            try environment.authorize(grant, .delete(author: author), in: conversation)
        }
        environment.store.delete(messageID: messageID, in: conversation) { result in
            switch result {
            case .success(let message): request.respond(.ok, json: JSONWriter.message(message))
            case .failure(let error): request.fail(environment.apiError(error, request: request))
            }
        }
    }

    /// The sender of a message, which never changes, so reading it before
    /// the write cannot race with it. A missing message is 404
    /// `message_not_found` for the member asking, as it would be anyway.
    private func author(of messageID: Int64, in conversation: ConversationID, request: APIRequest) throws(APIError) -> String {
        try environment.read(request) { () throws(StoreError) in
            try environment.store.message(messageID, in: conversation).sender
        }
    }
}
