/// The change feed of one conversation as an `AsyncSequence` of events.
///
/// It reads `GET .../events?since=V` as a Server-Sent Events stream, or
/// long-polls it (`wait=S`) in a loop, as ``HistoryClientConfiguration/feedTransport``
/// says (by default a stream, with long-polls as the fallback). Each
/// answer's events are yielded in order, then the next poll starts from the
/// answer's `version`: at once when `has_more` is true, else as another
/// long-poll; a stream that ends or breaks is reopened with `Last-Event-ID`.
/// Because the next `since` is only ever the version of an answer whose
/// events were all yielded, a failed poll (a dropped connection, a server
/// restarting on the same database) is simply retried from the same
/// version after a backoff: nothing is lost, nothing repeats. A token that
/// expires while a poll is parked is the same case: the poll answered 401
/// `token_expired` is asked again with a new token from the configured
/// provider, from the same version.
///
/// A 429 or 503 is waited out (its `Retry-After`), never the end. The
/// sequence ends (returns nil) when the consuming task is cancelled; it
/// throws when a poll fails with a non-transient error (e.g. the
/// conversation is gone, or `since` is ahead of a server whose database was
/// replaced), when ``ReconnectPolicy/maximumAttempts`` is exhausted, and
/// ``HistoryFeedReset`` when the server answers a reset (``batches`` yields
/// it as a batch instead).
///
/// ```swift
/// for try await event in client.events(of: "general", since: page.version) {
///     apply(event)
/// }
/// ```
///
/// To apply changes to a ``MessageWindow``, prefer ``batches``: the feed is
/// compacted, so one answer may list a message after a newer one.
public struct HistoryEventStream: AsyncSequence, Sendable {
    public typealias Element = HistoryEvent

    let plan: FeedPlan<ConversationEventSource>

    /// The same feed, one element per answer of the server (a page of a
    /// `has_more` chain, never joined), for consumers that apply changes together.
    public var batches: HistoryEventBatchStream {
        HistoryEventBatchStream(plan: plan)
    }

    public func makeAsyncIterator() -> Iterator {
        Iterator(events: FeedEventIterator(poller: FeedPoller(plan: plan)))
    }

    /// One consumer's position in the feed. Not shared between tasks.
    public struct Iterator: AsyncIteratorProtocol {
        private var events: FeedEventIterator<ConversationEventSource>

        init(events: FeedEventIterator<ConversationEventSource>) {
            self.events = events
        }

        /// The `since` of the next poll: every event up to it was yielded.
        public var version: Int64 { events.poller.position }

        public mutating func next() async throws -> HistoryEvent? {
            try await events.next()
        }
    }
}

/// The change feed as the server's answers: one element per page, whose
/// `hasMore` says another follows at once and whose `version` is the
/// position after it (on a stream, the changes of one network chunk).
/// Empty answers (a long-poll that timed out) are not yielded; a reset
/// (``HistoryEventBatch/reset``) and a new typing list
/// (``HistoryEventBatch/typing``) are. A long absence arrives page by page, so a consumer holds one
/// page at a time and may stop (reopen at the newest page) instead of
/// replaying it all; a message the compacted feed lists on a later page
/// than a newer one is inserted when that page arrives.
public struct HistoryEventBatchStream: AsyncSequence, Sendable {
    public typealias Element = HistoryEventBatch

    let plan: FeedPlan<ConversationEventSource>

    public func makeAsyncIterator() -> Iterator {
        Iterator(poller: FeedPoller(plan: plan))
    }

    public struct Iterator: AsyncIteratorProtocol {
        private var poller: FeedPoller<ConversationEventSource>

        init(poller: FeedPoller<ConversationEventSource>) {
            self.poller = poller
        }

        public var version: Int64 { poller.position }

        public mutating func next() async throws -> HistoryEventBatch? {
            try await poller.nextNonEmptyAnswer()
        }
    }
}

/// The conversation feed's request: `GET /v1/conversations/{id}/events`
/// with the stream's filters.
struct ConversationEventSource: FeedSource {
    let conversation: String
    let minID: Int64?
    let maxID: Int64?
    let limit: Int?
    /// Long-polls ask `typing=1` (streams always carry typing events).
    let typing: Bool

    func answer(from client: ChatHistoryClient, since: Int64, wait: Duration?) async throws -> HistoryEventBatch {
        let query = EventQuery(since: since, limit: limit, minID: minID, maxID: maxID, wait: wait, typing: typing)
        return try await client.events(of: conversation, query)
    }

    func streamEndpoint(since: Int64) -> HistoryEndpoint {
        let query = EventQuery(since: since, limit: limit, minID: minID, maxID: maxID)
        return HistoryEndpoint(method: "GET", path: ["v1", "conversations", conversation, "events"],
                               query: query.queryItems)
    }
}

extension HistoryEventBatch: FeedAnswer {
    var position: Int64 { version }
    var isReset: Bool { reset }

    static func position(of event: HistoryEvent) -> Int64 {
        event.version
    }

    static func streamed(_ events: [HistoryEvent], position: Int64) -> HistoryEventBatch {
        HistoryEventBatch(events: events, hasMore: false, version: position)
    }

    static func typing(_ users: [String], position: Int64) -> HistoryEventBatch? {
        HistoryEventBatch(events: [], hasMore: false, version: position, typing: users)
    }
}
