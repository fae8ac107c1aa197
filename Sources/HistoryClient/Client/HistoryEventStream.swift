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

    let poller: EventPoller

    /// The same feed, one element per complete answer (a `has_more` chain
    /// joined into one batch), for consumers that apply changes together.
    public var batches: HistoryEventBatchStream {
        HistoryEventBatchStream(poller: poller)
    }

    public func makeAsyncIterator() -> Iterator {
        Iterator(poller: poller)
    }

    /// One consumer's position in the feed. Not shared between tasks.
    public struct Iterator: AsyncIteratorProtocol {
        private var poller: EventPoller
        private var buffered: [HistoryEvent] = []
        private var nextIndex = 0

        init(poller: EventPoller) {
            self.poller = poller
        }

        /// The `since` of the next poll: every event up to it was yielded.
        public var version: Int64 { poller.version }

        public mutating func next() async throws -> HistoryEvent? {
            while nextIndex >= buffered.count {
                guard let batch = try await poller.nextAnswer() else { return nil }
                buffered = batch.events
                nextIndex = 0
            }
            defer { nextIndex += 1 }
            return buffered[nextIndex]
        }
    }
}

/// The change feed as complete answers: each element joins a `has_more`
/// chain into one batch whose `version` is the position after it. Empty
/// answers (a long-poll that timed out) are not yielded.
public struct HistoryEventBatchStream: AsyncSequence, Sendable {
    public typealias Element = HistoryEventBatch

    let poller: EventPoller

    public func makeAsyncIterator() -> Iterator {
        Iterator(poller: poller)
    }

    public struct Iterator: AsyncIteratorProtocol {
        private var poller: EventPoller

        init(poller: EventPoller) {
            self.poller = poller
        }

        public var version: Int64 { poller.version }

        public mutating func next() async throws -> HistoryEventBatch? {
            var events: [HistoryEvent] = []
            while true {
                guard let answer = try await poller.nextAnswer() else { return nil }
                events += answer.events
                if !answer.hasMore, !events.isEmpty {
                    return HistoryEventBatch(events: events, hasMore: false, version: answer.version)
                }
            }
        }
    }
}

/// The polling loop both sequences share: one position, retries with
/// backoff, cancellation as the end.
struct EventPoller: Sendable {
    let client: HistoryClient
    let conversation: String
    let minID: Int64?
    let maxID: Int64?
    let limit: Int?
    /// The `since` of the next poll: the version of the last answer.
    private(set) var version: Int64
    /// The previous answer said more changes are waiting: poll without waiting.
    private var hasMore = false
    private var consecutiveFailures = 0

    init(client: HistoryClient, conversation: String, since: Int64, minID: Int64?, maxID: Int64?, limit: Int?) {
        self.client = client
        self.conversation = conversation
        self.version = since
        self.minID = minID
        self.maxID = maxID
        self.limit = limit
    }

    /// The next answer of the feed (possibly empty), after as many retries as
    /// the policy allows; nil when the task is cancelled.
    mutating func nextAnswer() async throws -> HistoryEventBatch? {
        while !Task.isCancelled {
            let configuration = client.configuration
            let query = EventQuery(since: version, limit: limit, minID: minID, maxID: maxID,
                                   wait: hasMore ? nil : configuration.eventWait)
            do {
                var batch = try await client.events(of: conversation, query)
                consecutiveFailures = 0
                // The server never answers an event at or below `since`; dropping
                // one anyway is what keeps "never repeated" true against a buggy peer.
                let since = version
                batch.events.removeAll { $0.version <= since }
                version = Swift.max(version, batch.version)
                hasMore = batch.hasMore
                return batch
            } catch is CancellationError {
                return nil
            } catch let error as HistoryClientError where error.isTransient {
                consecutiveFailures += 1
                let policy = configuration.reconnect
                if let maximum = policy.maximumAttempts, consecutiveFailures >= maximum {
                    throw error
                }
                let delay = policy.delay(afterFailures: consecutiveFailures, randomFraction: Double.random(in: 0..<1))
                do {
                    try await Task.sleep(for: delay)
                } catch {
                    return nil
                }
            }
        }
        return nil
    }
}
