/// The change feed of one conversation as an `AsyncSequence` of events.
///
/// It long-polls `GET .../events?since=V&wait=S` in a loop. Each answer's
/// events are yielded in order, then the next poll starts from the answer's
/// `version`: at once when `has_more` is true, else as another long-poll.
/// Because the next `since` is only ever the version of an answer whose
/// events were all yielded, a failed poll (a dropped connection, a server
/// restarting on the same database) is simply retried from the same
/// version after a backoff: nothing is lost, nothing repeats.
///
/// The sequence ends (returns nil) when the consuming task is cancelled; it
/// throws when a poll fails with a non-transient error (e.g. the
/// conversation is gone, or `since` is ahead of a server whose database was
/// replaced) or when ``ReconnectPolicy/maximumAttempts`` is exhausted.
///
/// ```swift
/// let stream = client.events(of: "general", since: page.version)
/// for try await event in stream {
///     apply(event)
/// }
/// ```
public struct HistoryEventStream: AsyncSequence, Sendable {
    public typealias Element = HistoryEvent

    let client: HistoryClient
    let conversation: String
    let since: Int64
    let minID: Int64?
    let maxID: Int64?
    let limit: Int?

    public func makeAsyncIterator() -> Iterator {
        Iterator(stream: self)
    }

    /// One consumer's position in the feed. Not shared between tasks.
    public struct Iterator: AsyncIteratorProtocol {
        private let stream: HistoryEventStream
        private var buffered: [HistoryEvent] = []
        private var nextIndex = 0
        /// The `since` of the next poll: the version of the last answer.
        public private(set) var version: Int64
        /// The previous answer said more changes are waiting: poll without waiting.
        private var hasMore = false
        private var consecutiveFailures = 0

        init(stream: HistoryEventStream) {
            self.stream = stream
            self.version = stream.since
        }

        public mutating func next() async throws -> HistoryEvent? {
            while true {
                if nextIndex < buffered.count {
                    defer { nextIndex += 1 }
                    return buffered[nextIndex]
                }
                if Task.isCancelled { return nil }
                let configuration = stream.client.configuration
                let query = EventQuery(since: version, limit: stream.limit, minID: stream.minID,
                                       maxID: stream.maxID, wait: hasMore ? nil : configuration.eventWait)
                do {
                    let batch = try await stream.client.events(of: stream.conversation, query)
                    consecutiveFailures = 0
                    buffered = batch.events.filter { $0.version > version }
                    nextIndex = 0
                    version = Swift.max(version, batch.version)
                    hasMore = batch.hasMore
                } catch is CancellationError {
                    return nil
                } catch let error as HistoryClientError where error.isTransient {
                    consecutiveFailures += 1
                    let policy = configuration.reconnect
                    if let maximum = policy.maximumAttempts, consecutiveFailures >= maximum {
                        throw error
                    }
                    let delay = policy.delay(afterFailures: consecutiveFailures,
                                             randomFraction: Double.random(in: 0..<1))
                    do {
                        try await Task.sleep(for: delay)
                    } catch {
                        return nil
                    }
                }
            }
        }
    }
}
