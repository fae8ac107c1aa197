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
    private func append(_ request: APIRequest) throws(APIError) {
        let conversation = try environment.conversationID(request)
        let body = try RequestBody(request.http.body)
        let message = NewMessage(sender: try body.requiredString("sender"),
                                 body: try body.requiredString("body"),
                                 clientID: try body.optionalString("client_id"),
                                 replyTo: try body.optionalPositiveInt64("reply_to"))
        try MessageRules.check { () throws(StoreError) in try MessageRules.validate(message) }
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
        let query = try Self.pageQuery(request.query)
        let page = try environment.read(request) { () throws(StoreError) in
            try environment.store.page(of: conversation, query)
        }
        request.respond(.ok, json: JSONWriter.page(page))
    }

    /// `limit`, `before`, `after`, `around` and `window` as docs/API.md "Pages"
    /// defines them. Checked in this order, so the first problem named is
    /// the most basic one: each value's syntax and range (`invalid_cursor`,
    /// `invalid_limit`, `invalid_window`), then `around` beside another
    /// cursor (`conflicting_cursors`), then `window` beside anything but a
    /// lone `after` (`invalid_window`).
    static func pageQuery(_ query: QueryParameters) throws(APIError) -> PageQuery {
        let before = try cursor(query, "before")
        let after = try cursor(query, "after")
        let around = try cursor(query, "around")
        var limit = PageQuery.defaultLimit
        if let text = try query.value("limit", invalid: APIError.invalidLimit) {
            guard let value = DecimalParser.positiveInt64(text), value <= PageQuery.limitRange.upperBound else {
                throw APIError.invalidLimit("limit must be an integer from \(PageQuery.limitRange.lowerBound) to \(PageQuery.limitRange.upperBound), not '\(abbreviated(text))'")
            }
            limit = Int(value)
        }
        var window: Int?
        if let text = try query.value("window", invalid: APIError.invalidWindow) {
            guard let value = DecimalParser.positiveInt64(text), value <= PageQuery.windowRange.upperBound else {
                throw APIError.invalidWindow("window must be an integer from \(PageQuery.windowRange.lowerBound) to \(PageQuery.windowRange.upperBound), not '\(abbreviated(text))'")
            }
            window = Int(value)
        }
        if around != nil && (before != nil || after != nil) {
            throw APIError.conflictingCursors("around cannot be combined with before or after")
        }
        if window != nil && (after == nil || before != nil || around != nil) {
            throw APIError.invalidWindow("window is only allowed beside a lone after")
        }
        let pageCursor: PageCursor
        switch (before, after, around) {
        case (let before?, let after?, nil): pageCursor = .between(after: after, before: before)
        case (let before?, nil, nil): pageCursor = .before(before)
        case (nil, let after?, nil): pageCursor = .after(after)
        case (nil, nil, let around?): pageCursor = .around(around)
        default: pageCursor = .newest
        }
        return PageQuery(cursor: pageCursor, limit: limit, window: window)
    }

    private static func cursor(_ query: QueryParameters, _ name: String) throws(APIError) -> Int64? {
        guard let text = try query.value(name, invalid: APIError.invalidCursor) else { return nil }
        // A position, not a message: 0 is below every id (`after=0` walks from the first message).
        guard let id = DecimalParser.nonNegativeInt64(text) else {
            throw APIError.invalidCursor("\(name) must be a message id or position, an integer from 0 to \(Int64.max), not '\(abbreviated(text))'")
        }
        return id
    }

    // MARK: - Edit and delete

    /// Body `{"body"}`: 200 with the message and its `edited_at`.
    private func edit(_ request: APIRequest) throws(APIError) {
        let conversation = try environment.conversationID(request)
        let messageID = try environment.messageID(request)
        let text = try RequestBody(request.http.body).requiredString("body")
        try MessageRules.check { () throws(StoreError) in try MessageRules.validateBody(text) }
        environment.store.edit(messageID: messageID, in: conversation, body: text) { result in
            switch result {
            case .success(let message): request.respond(.ok, json: JSONWriter.message(message))
            case .failure(let error): request.fail(environment.apiError(error, request: request))
            }
        }
    }

    /// 200 with the tombstone; a tombstone deleted again is answered unchanged.
    private func delete(_ request: APIRequest) throws(APIError) {
        let conversation = try environment.conversationID(request)
        let messageID = try environment.messageID(request)
        environment.store.delete(messageID: messageID, in: conversation) { result in
            switch result {
            case .success(let message): request.respond(.ok, json: JSONWriter.message(message))
            case .failure(let error): request.fail(environment.apiError(error, request: request))
            }
        }
    }
}
