/// A user's inbox feed as an `AsyncSequence` of changes.
///
/// It streams or long-polls `GET /v1/users/{user}/events?since=A` exactly
/// as ``HistoryEventStream`` reads a conversation's feed: each
/// answer's events are yielded in order, then the next poll starts from the
/// answer's `activity`, so a dropped connection, a restarted server or an
/// expired token (refreshed through the configured provider) costs a retry
/// from the same position, never a lost or repeated change.
///
/// The sequence ends (returns nil) when the consuming task is cancelled; it
/// throws when a poll fails with a non-transient error (e.g. a user token
/// naming another user, or `since` ahead of a server whose database was
/// replaced) or when ``ReconnectPolicy/maximumAttempts`` is exhausted, and
/// ``HistoryFeedReset`` when the server answers a reset (``batches`` yields
/// it as a batch: reload the first page, see ``LiveInbox``). A 429 or 503
/// is waited out, never the end.
///
/// To apply changes to an ``Inbox``, prefer ``batches``: one batch per
/// answer of the server.
public struct InboxFeed: AsyncSequence, Sendable {
    public typealias Element = HistoryInboxEvent

    let plan: FeedPlan<InboxEventSource>

    /// The same feed, one element per answer of the server (a page of a
    /// `has_more` chain, never joined). Empty answers are not yielded.
    public var batches: Batches {
        Batches(plan: plan)
    }

    public func makeAsyncIterator() -> Iterator {
        Iterator(events: FeedEventIterator(poller: FeedPoller(plan: plan)))
    }

    /// One consumer's position in the feed. Not shared between tasks.
    public struct Iterator: AsyncIteratorProtocol {
        private var events: FeedEventIterator<InboxEventSource>

        init(events: FeedEventIterator<InboxEventSource>) {
            self.events = events
        }

        /// The `since` of the next poll: every change up to it was yielded.
        public var activity: Int64 { events.poller.position }

        public mutating func next() async throws -> HistoryInboxEvent? {
            try await events.next()
        }
    }

    /// The inbox feed as the server's answers, one page at a time.
    public struct Batches: AsyncSequence, Sendable {
        public typealias Element = HistoryInboxEventBatch

        let plan: FeedPlan<InboxEventSource>

        public func makeAsyncIterator() -> Iterator {
            Iterator(poller: FeedPoller(plan: plan))
        }

        public struct Iterator: AsyncIteratorProtocol {
            private var poller: FeedPoller<InboxEventSource>

            init(poller: FeedPoller<InboxEventSource>) {
                self.poller = poller
            }

            /// The `since` of the next poll.
            public var activity: Int64 { poller.position }

            public mutating func next() async throws -> HistoryInboxEventBatch? {
                try await poller.nextNonEmptyAnswer()
            }
        }
    }
}

/// The inbox feed's request: `GET /v1/users/{user}/events`.
struct InboxEventSource: FeedSource {
    let user: String
    let limit: Int?

    func answer(from client: ChatHistoryClient, since: Int64, wait: Duration?) async throws
        -> HistoryInboxEventBatch {
        try await client.inboxEvents(of: user, since: since, limit: limit, wait: wait)
    }

    func streamEndpoint(since: Int64) -> HistoryEndpoint {
        var query = [("since", String(since))]
        if let limit { query.append(("limit", String(limit))) }
        return HistoryEndpoint(method: "GET", path: ["v1", "users", user, "events"], query: query)
    }
}

extension HistoryInboxEventBatch: FeedAnswer {
    var position: Int64 { activity }
    var isReset: Bool { reset }
    /// The inbox feed carries no typing.
    var typing: [String]? {
        get { nil }
        set {}
    }

    static func position(of event: HistoryInboxEvent) -> Int64 {
        event.activity
    }

    static func streamed(_ events: [HistoryInboxEvent], position: Int64) -> HistoryInboxEventBatch {
        HistoryInboxEventBatch(events: events, hasMore: false, activity: position)
    }

    static func typing(_ users: [String], position: Int64) -> HistoryInboxEventBatch? {
        nil
    }
}
