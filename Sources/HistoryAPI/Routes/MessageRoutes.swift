import HTTPCore
import HistoryAccess
import HistoryStore

/// The messages of a conversation: append, page, one message, edit, delete.
package struct MessageRoutes {
    let environment: RouteEnvironment

    func register(in router: inout Router) {
        router.add(.post, "/v1/conversations/{cid}/messages") { request throws(APIError) in try append(request) }
        router.add(.get, "/v1/conversations/{cid}/messages", shortcut: { request in pageFromMemory(request) }) {
            request throws(APIError) in try page(request)
        }
        router.add(.get, "/v1/conversations/{cid}/messages/{id}") { request throws(APIError) in try one(request) }
        router.add(.patch, "/v1/conversations/{cid}/messages/{id}") { request throws(APIError) in try edit(request) }
        router.add(.delete, "/v1/conversations/{cid}/messages/{id}") { request throws(APIError) in try delete(request) }
    }

    // MARK: - Append

    /// Body `{"sender","body","client_id"?,"reply_to"?}`: 201 with the new
    /// message, or 200 with the original when `client_id` was used before.
    /// A user's `sender` is its token's `sub`: the body may leave it out,
    /// and naming anyone else is 403 `sender_mismatch`; an admin names the
    /// sender, as before tokens existed.
    private func append(_ request: APIRequest) throws(APIError) -> Answer {
        let conversation = try environment.conversationID(request)
        let caller = try environment.caller(request)
        let body = try RequestBody(request.http.body)
        let sender: String
        let access: AccessCheck
        if case .user(let user) = caller {
            let given = try body.optionalString(.sender)
            access = try environment.access(request, .append(sender: given))
            sender = user.rawValue
        } else {
            access = .admin
            sender = try body.requiredString(.sender)
        }
        let message = NewMessage(sender: sender,
                                 body: try body.requiredString(.body),
                                 clientID: try body.optionalString(.clientID),
                                 replyTo: try body.optionalPositiveInt64(.replyTo))
        try APIError.enforcing { () throws(RuleViolation) in try MessageRules.check(message) }
        return request.later { promise in
            environment.store.append(message, to: conversation, access: access) { result in
                promise.complete(result) { outcome in
                    switch outcome {
                    case .created(let message): promise.succeed(.created, json: JSONWriter.message(message))
                    case .existing(let message): promise.succeed(.ok, json: JSONWriter.message(message))
                    }
                }
            }
        }
    }

    // MARK: - Page

    /// The hot path: parse, one keyset read (the caller's role in the same
    /// snapshot), one encode; the answer is returned. Where the store
    /// reads pages later (PostgreSQL, `readsPagesLater`), the read and the
    /// encode run on the thread of the statement that reads the page, and
    /// this thread goes back to the other connections meanwhile.
    ///
    /// With `If-None-Match`, first the conversation's counters (one O(1)
    /// read, access decided in it): a tag that still matches is a 304
    /// without reading a message (`EntityTag.page`).
    ///
    /// The newest page at a version already sent is the kept bytes
    /// (`NewestPageCache`): after the counters' read, without reading the
    /// page; after the page's read, without encoding it. Where the store
    /// keeps no versions in memory (PostgreSQL; on SQLite the shortcut
    /// answered a kept page already), a newest page with an entry reads
    /// the counters first, as a conditional request does: the counters'
    /// statement costs about a third of the page's, so this pays while
    /// most opens find their page unchanged, and costs one more
    /// statement when one does not.
    private func page(_ request: APIRequest) throws(APIError) -> Answer {
        let conversation = try environment.conversationID(request)
        let access = try environment.access(request, .readPages)
        var query = try Self.pageQuery(request.query)
        let budget = environment.limits.maximumResponseBytes
        query.byteBudget = budget
        let gzip = request.acceptsGzip
        let key = NewestPageCache.Key(conversation, query, gzip: gzip)
        let countersFirst = request.hasIfNoneMatch || key.map { key in
            environment.newestPages.holds(key) && environment.store.knownVersion(of: conversation) == nil
        } == true
        if countersFirst {
            let current = try environment.read(request) { () throws(StoreError) in
                try environment.store.conversation(conversation, access: access)
            }
            let tag = EntityTag.page(of: conversation, version: current.version, query: query, budget: budget, gzip: gzip)
            if let notModified = request.notModified(tag) { return notModified }
            if let kept = key.flatMap({ environment.newestPages.entry($0, version: current.version) }) {
                return keptPage(kept, tag: tag, request)
            }
        }
        if environment.store.readsPagesLater {
            let query = query
            return request.later { promise in
                environment.store.page(of: conversation, query, access: access) { result in
                    promise.complete(result) { page in
                        promise.resolve(pageResponse(page, of: conversation, query, key: key, request))
                    }
                }
            }
        }
        let page = try environment.read(request) { () throws(StoreError) in
            try environment.store.page(of: conversation, query, access: access)
        }
        return .now(pageResponse(page, of: conversation, query, key: key, request))
    }

    /// A page's answer: the kept newest page when it is the one read, else
    /// the page encoded (and kept when it is a newest page).
    private func pageResponse(_ page: Page, of conversation: ConversationID, _ query: PageQuery,
                              key: NewestPageCache.Key?, _ request: APIRequest) -> HTTPResponse {
        let budget = environment.limits.maximumResponseBytes
        let gzip = request.acceptsGzip
        let tag = EntityTag.page(of: conversation, version: page.version, query: query, budget: budget, gzip: gzip)
        if let kept = key.flatMap({ environment.newestPages.entry($0, version: page.version) }) {
            return keptResponse(kept, tag: tag, request)
        }
        // A jump by time that found nothing answers the newest page: trimmed as one.
        let trim = page.anchor.map { $0.id == nil } == true ? PageTrim.keepNewest : PageTrim(query, reset: page.reset)
        let response = request.jsonResponse(.ok, JSONWriter.page(page, budget: budget, trim: trim),
                                            headers: ["ETag": tag.value])
        if let key {
            environment.newestPages.keep(key, version: page.version, body: response.body,
                                         gzipped: ContentCoding.isGzipped(response))
        }
        return response   // its route is set: `answer` would copy it to set it again
    }

    /// What `page` would answer, decided without blocking from the
    /// conversation's kept version, without a read: the 304, or a newest
    /// page kept at that version; nil: `page` decides. A request for any
    /// other page without `If-None-Match` is sent on at once.
    private func pageFromMemory(_ request: APIRequest) -> Answer? {
        let conditional = request.hasIfNoneMatch
        guard conditional || Self.mayBeNewest(target: request.http.target),
              let (conversation, version) = environment.keptVersion(for: request, .readPages),
              var query = try? Self.pageQuery(request.query) else { return nil }
        let budget = environment.limits.maximumResponseBytes
        query.byteBudget = budget
        let gzip = request.acceptsGzip
        let tag = EntityTag.page(of: conversation, version: version, query: query, budget: budget, gzip: gzip)
        if conditional, let notModified = request.notModified(tag) { return notModified }
        guard let key = NewestPageCache.Key(conversation, query, gzip: gzip),
              let kept = environment.newestPages.entry(key, version: version) else { return nil }
        return keptPage(kept, tag: tag, request)
    }

    /// A kept newest page, as `page` would have sent it.
    private func keptPage(_ kept: NewestPageCache.Entry, tag: EntityTag, _ request: APIRequest) -> Answer {
        .now(keptResponse(kept, tag: tag, request))
    }

    private func keptResponse(_ kept: NewestPageCache.Entry, tag: EntityTag, _ request: APIRequest) -> HTTPResponse {
        var response = HTTPResponse.json(.ok, kept.body, route: request.route)
        response.headers.add(name: "ETag", value: tag.value)
        ContentCoding.label(&response, gzipped: kept.gzipped)
        return response
    }

    /// False when a name in the target's query starts as a cursor's does
    /// (`before`, `after`, `around`, `around_time`): such a request cannot
    /// ask for the newest page, and skips the kept pages without parsing
    /// its query (a deep page pays only this one look at its target's
    /// bytes). A name spelt with `%` escapes passes and is parsed, which
    /// decides.
    static func mayBeNewest(target: String) -> Bool {
        var target = target
        return target.withUTF8 { bytes in
            // From the end back to the `?`: the query is the target's tail.
            var index = bytes.count
            while index > 0 {
                index -= 1
                let byte = bytes[index]
                guard byte == UInt8(ascii: "&") || byte == UInt8(ascii: "?") else { continue }
                if startsWith(bytes, at: index + 1, "before") || startsWith(bytes, at: index + 1, "after")
                    || startsWith(bytes, at: index + 1, "around") { return false }
                if byte == UInt8(ascii: "?") { return true }
            }
            return true
        }
    }

    private static func startsWith(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int, _ name: StaticString) -> Bool {
        let count = name.utf8CodeUnitCount
        guard bytes.count - index >= count else { return false }
        for offset in 0..<count where bytes[index + offset] != name.utf8Start[offset] { return false }
        return true
    }

    // MARK: - One message

    /// The message, a tombstone too (reply previews, notifications): 404
    /// `message_not_found` for an id the conversation does not hold, the
    /// caller's membership decided in the same snapshot as every read.
    private func one(_ request: APIRequest) throws(APIError) -> Answer {
        let conversation = try environment.conversationID(request)
        let access = try environment.access(request, .readPages)
        let messageID = try environment.messageID(request)
        let message = try environment.read(request) { () throws(StoreError) in
            try environment.store.message(messageID, in: conversation, access: access)
        }
        let tag = EntityTag.message(message, gzip: request.acceptsGzip)
        if let notModified = request.notModified(tag) { return notModified }
        return request.json(.ok, JSONWriter.message(message), headers: ["ETag": tag.value])
    }

    /// `limit`, `before`, `after`, `around`, `around_time` and `window` as
    /// docs/API.md "Pages" and "Live" define them, under `PageQuery`'s
    /// rules. Checked in this order, so the first problem named is the most
    /// basic one: each value's syntax and range (`invalid_cursor`,
    /// `invalid_limit`, `invalid_window`, `invalid_time`), then `around` or
    /// `around_time` beside another cursor (`conflicting_cursors`, which
    /// `PageCursor` cannot even hold), then the query's own rules (`window`
    /// beside anything but a lone `after`: `invalid_window`).
    package static func pageQuery(_ query: QueryParameters) throws(APIError) -> PageQuery {
        let before = try query.integer(PageQuery.beforeRule)
        let after = try query.integer(PageQuery.afterRule)
        let around = try query.integer(PageQuery.aroundRule)
        let limit = try query.integer(PageQuery.limitRule).map { Int($0) } ?? PageQuery.defaultLimit
        let window = try query.integer(PageQuery.windowRule).map { Int($0) }
        let aroundTime = try Self.aroundTime(query)
        if around != nil && (before != nil || after != nil) {
            throw APIError(.conflictingCursors, "around cannot be combined with before or after")
        }
        if let aroundTime {
            guard before == nil && after == nil && around == nil else {
                throw APIError(.conflictingCursors, "around_time cannot be combined with before, after or around")
            }
            let pageQuery = PageQuery(cursor: .aroundTime(aroundTime), limit: limit, window: window)
            try APIError.enforcing { () throws(RuleViolation) in try pageQuery.check() }
            return pageQuery
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

    /// `around_time`: an RFC 3339 time, `Z` or an offset, any fraction of
    /// a second (`invalid_time`); nil when absent.
    static func aroundTime(_ query: QueryParameters) throws(APIError) -> Timestamp? {
        guard let text = try query.value(InputField.aroundTime.name, invalid: .invalidTime) else { return nil }
        guard let time = Timestamp(anyRFC3339: text) else {
            throw APIError(.invalidTime, "around_time must be an RFC 3339 time such as 2026-11-21T10:00:00.123Z, "
                + "not '\(abbreviated(text))'")
        }
        return time
    }

    // MARK: - Edit and delete

    /// Body `{"body"}`: 200 with the message and its `edited_at`.
    /// A user edits its own messages only.
    private func edit(_ request: APIRequest) throws(APIError) -> Answer {
        let conversation = try environment.conversationID(request)
        let access = try environment.access(request) { author in .edit(author: author) }
        let messageID = try environment.messageID(request)
        let text = try RequestBody(request.http.body).requiredString(.body)
        try APIError.enforcing { () throws(RuleViolation) in try MessageRules.checkBody(text) }
        return request.later { promise in
            environment.store.edit(messageID: messageID, in: conversation, body: text, access: access) { result in
                promise.complete(result) { message in promise.succeed(.ok, json: JSONWriter.message(message)) }
            }
        }
    }

    /// 200 with the tombstone; a tombstone deleted again is answered unchanged.
    /// A user deletes its own messages only.
    private func delete(_ request: APIRequest) throws(APIError) -> Answer {
        let conversation = try environment.conversationID(request)
        let access = try environment.access(request) { author in .delete(author: author) }
        let messageID = try environment.messageID(request)
        return request.later { promise in
            environment.store.delete(messageID: messageID, in: conversation, access: access) { result in
                promise.complete(result) { message in promise.succeed(.ok, json: JSONWriter.message(message)) }
            }
        }
    }
}
