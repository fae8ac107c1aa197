/// The change feed of one conversation as an `AsyncSequence` of events.
///
/// It long-polls `GET .../events?since=V&wait=S` in a loop. Each answer's
/// events are yielded in order, then the next poll starts from the answer's
/// `version`: at once when `has_more` is true, else as another long-poll.
/// Because the next `since` is only ever the version of an answer whose
/// events were all yielded, a failed poll (a dropped connection, a server
/// restarting on the same database) is simply retried from the same
/// version after a backoff: nothing is lost, nothing repeats. A token that
/// expires while a poll is parked is the same case: the poll answered 401
/// `token_expired` is asked again with a new token from the configured
/// provider, from the same version.
///
/// The sequence ends (returns nil) when the consuming task is cancelled; it
/// throws when a poll fails with a non-transient error (e.g. the
/// conversation is gone, or `since` is ahead of a server whose database was
/// replaced) or when ``ReconnectPolicy/maximumAttempts`` is exhausted.
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

    let poller: FeedPoller<ConversationEventSource>

    /// The same feed, one element per answer of the server (a page of a
    /// `has_more` chain, never joined), for consumers that apply changes together.
    public var batches: HistoryEventBatchStream {
        HistoryEventBatchStream(poller: poller)
    }

    public func makeAsyncIterator() -> Iterator {
        Iterator(events: FeedEventIterator(poller: poller))
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
/// position after it. Empty answers (a long-poll that timed out) are not
/// yielded. A long absence arrives page by page, so a consumer holds one
/// page at a time and may stop (reopen at the newest page) instead of
/// replaying it all; a message the compacted feed lists on a later page
/// than a newer one is inserted when that page arrives.
public struct HistoryEventBatchStream: AsyncSequence, Sendable {
    public typealias Element = HistoryEventBatch

    let poller: FeedPoller<ConversationEventSource>

    public func makeAsyncIterator() -> Iterator {
        Iterator(poller: poller)
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

    func answer(from client: ChatHistoryClient, since: Int64, wait: Duration?) async throws -> HistoryEventBatch {
        let query = EventQuery(since: since, limit: limit, minID: minID, maxID: maxID, wait: wait)
        return try await client.events(of: conversation, query)
    }
}

extension HistoryEventBatch: FeedAnswer {
    var position: Int64 { version }

    static func position(of event: HistoryEvent) -> Int64 {
        event.version
    }
}
