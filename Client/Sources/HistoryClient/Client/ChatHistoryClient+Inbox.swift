/// A user's inbox: the conversations it is a member of, most recent first,
/// with unread counts; read markers; and the inbox's change feed.
///
/// `user` is `"me"` by default: the token's subject on a tokens-mode server
/// (a user token may only name itself). A server in open mode has no token,
/// so name the user there (`"ana"`).
extension ChatHistoryClient {
    /// `GET /v1/users/{user}/conversations`: one keyset page of the inbox,
    /// up to `limit` (1...200, server default 50) rows after `cursor` (a
    /// previous page's ``HistoryInboxPage/nextCursor``; nil: the top).
    ///
    /// ```swift
    /// let first = try await client.inbox()
    /// show(first.conversations)
    /// if let cursor = first.nextCursor {
    ///     let second = try await client.inbox(cursor: cursor)
    /// }
    /// ```
    public func inbox(of user: String = "me", cursor: String? = nil, limit: Int? = nil) async throws
        -> HistoryInboxPage {
        var query: [(String, String)] = []
        if let cursor { query.append(("cursor", cursor)) }
        if let limit { query.append(("limit", String(limit))) }
        let endpoint = HistoryEndpoint(method: "GET", path: ["v1", "users", user, "conversations"], query: query,
                                       revalidates: true)
        return try await send(endpoint, as: HistoryInboxPage.self).value
    }

    /// `PUT /v1/conversations/{conversation}/members/{user}/read`: moves the
    /// user's read marker up to `messageID` and answers the read state after.
    ///
    /// Forward only, so calling it from every device and every scroll is
    /// safe: a lower id changes nothing (the answer is the current state),
    /// and an id above the conversation's newest message is taken as the
    /// newest. A conversation the user is not a member of throws
    /// ``HistoryErrorCode/conversationNotFound`` (with a user token) or
    /// ``HistoryErrorCode/memberNotFound`` (admin token, open mode).
    @discardableResult
    public func markRead(_ conversation: String, upTo messageID: Int64, as user: String = "me") async throws
        -> HistoryReadState {
        let endpoint = HistoryEndpoint(
            method: "PUT", path: ["v1", "conversations", conversation, "members", user, "read"],
            body: try encode(MarkReadBody(lastReadID: messageID)))
        return try await send(endpoint, as: HistoryReadState.self).value
    }

    /// `GET /v1/users/{user}/events`: one answer of the inbox feed, the rows
    /// changed after activity `since` (compacted, ascending). With a `wait`
    /// (up to 60 s) the server parks the request until something changes;
    /// it goes through the long-poll session like ``events(of:_:)``.
    public func inboxEvents(of user: String = "me", since: Int64, limit: Int? = nil, wait: Duration? = nil)
        async throws -> HistoryInboxEventBatch {
        var query = [("since", String(since))]
        if let limit { query.append(("limit", String(limit))) }
        if let wait { query.append(("wait", EventQuery.format(wait))) }
        var endpoint = HistoryEndpoint(method: "GET", path: ["v1", "users", user, "events"], query: query)
        if let wait, wait > .zero {
            endpoint.timeout = Swift.min(wait, Self.maximumWait) + configuration.longPollMargin
        }
        return try await send(endpoint, as: HistoryInboxEventBatch.self).value
    }

    /// Every change of the inbox after activity `since` (a page's
    /// ``HistoryInboxPage/activity``), forever: long-polls in a loop,
    /// follows `has_more` at once, reconnects with
    /// ``HistoryClientConfiguration/reconnect`` and resumes from the last
    /// activity it yielded, across server restarts and token refreshes. It
    /// ends when the consuming task is cancelled.
    ///
    /// ```swift
    /// for try await batch in client.inboxFeed(since: page.activity).batches {
    ///     let changes = inbox.apply(batch.events, through: batch.activity)
    /// }
    /// ```
    public func inboxFeed(of user: String = "me", since activity: Int64, limit: Int? = nil) -> InboxFeed {
        InboxFeed(plan: FeedPlan(client: self, source: InboxEventSource(user: user, limit: limit), since: activity))
    }
}

private struct MarkReadBody: Encodable {
    var lastReadID: Int64

    enum CodingKeys: String, CodingKey {
        case lastReadID = "last_read_id"
    }
}
