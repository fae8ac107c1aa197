/// One answer of a long-polled change feed: its events, whether more are
/// waiting, and the position after it (the next `since`).
///
/// The conversation feed (positions are conversation versions) and the
/// inbox feed (positions are the server-wide activity counter) have the same
/// shape, so one polling loop serves both.
protocol FeedAnswer: Sendable {
    associatedtype Event: Sendable
    var events: [Event] { get set }
    var hasMore: Bool { get }
    /// The `since` of the next poll.
    var position: Int64 { get }
    /// The position of one event: only events above `since` are new.
    static func position(of event: Event) -> Int64
}

/// What a ``FeedPoller`` asks: one request of a feed from `since`, parked up
/// to `wait` when nothing changed yet (nil: answer at once).
protocol FeedSource: Sendable {
    associatedtype Answer: FeedAnswer
    func answer(from client: ChatHistoryClient, since: Int64, wait: Duration?) async throws -> Answer
}

/// The polling loop every long-polled feed shares: one position, retries
/// with backoff, cancellation as the end.
///
/// The position only ever becomes the `since` returned by an answer whose
/// events were all handed out, so a failed poll (a dropped connection, a
/// server restarting on the same database, a 401 `token_expired` answered
/// with a fresh token by ``ChatHistoryClient``'s retry) is simply asked again
/// from the same position after a backoff: nothing is lost, nothing repeats.
struct FeedPoller<Source: FeedSource>: Sendable {
    let client: ChatHistoryClient
    let source: Source
    /// The `since` of the next poll: the position of the last answer.
    private(set) var position: Int64
    /// The previous answer said more changes are waiting: poll without waiting.
    private var hasMore = false
    private var consecutiveFailures = 0

    init(client: ChatHistoryClient, source: Source, since: Int64) {
        self.client = client
        self.source = source
        self.position = since
    }

    /// The next answer of the feed (possibly empty), after as many retries as
    /// the policy allows; nil when the task is cancelled.
    mutating func nextAnswer() async throws -> Source.Answer? {
        while !Task.isCancelled {
            let configuration = client.configuration
            do {
                var answer = try await source.answer(from: client, since: position,
                                                     wait: hasMore ? nil : configuration.eventWait)
                consecutiveFailures = 0
                // The server never answers an event at or below `since`; dropping
                // one anyway is what keeps "never repeated" true against a buggy peer.
                let since = position
                answer.events.removeAll { Source.Answer.position(of: $0) <= since }
                position = Swift.max(position, answer.position)
                hasMore = answer.hasMore
                return answer
            } catch is CancellationError {
                return nil
            } catch let error as HistoryClientError where error.isTransient {
                let policy = configuration.reconnect
                let delay: Duration
                if let retryAfter = error.retryAfter {
                    // The server said when to come back (a 429, a 503 while
                    // it restarts): not a failure of the connection, so it
                    // neither grows the backoff nor counts toward giving up.
                    delay = Swift.max(retryAfter, policy.initialDelay)
                } else {
                    consecutiveFailures += 1
                    if let maximum = policy.maximumAttempts, consecutiveFailures >= maximum {
                        throw error
                    }
                    delay = policy.delay(afterFailures: consecutiveFailures, randomFraction: Double.random(in: 0..<1))
                }
                do {
                    try await Task.sleep(for: delay)
                } catch {
                    return nil
                }
            }
        }
        return nil
    }

    /// The next answer that carries events, as the server paged it: a long
    /// `has_more` chain (an app back after an hour) comes one page at a time,
    /// so a consumer can apply each page at once, or stop and reopen at the
    /// newest page instead of replaying the rest. Nil when the task is cancelled.
    mutating func nextNonEmptyAnswer() async throws -> Source.Answer? {
        while true {
            guard let answer = try await nextAnswer() else { return nil }
            if !answer.events.isEmpty { return answer }
        }
    }
}

/// A feed's answers handed out one event at a time.
struct FeedEventIterator<Source: FeedSource>: Sendable {
    private(set) var poller: FeedPoller<Source>
    private var buffered: [Source.Answer.Event] = []
    private var nextIndex = 0

    init(poller: FeedPoller<Source>) {
        self.poller = poller
    }

    mutating func next() async throws -> Source.Answer.Event? {
        while nextIndex >= buffered.count {
            guard let answer = try await poller.nextAnswer() else { return nil }
            buffered = answer.events
            nextIndex = 0
        }
        defer { nextIndex += 1 }
        return buffered[nextIndex]
    }
}
