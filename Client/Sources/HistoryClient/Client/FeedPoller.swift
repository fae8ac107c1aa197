import Foundation

/// One answer of a change feed: its events, whether more are waiting, and
/// the position after it (the next `since`).
///
/// The conversation feed (positions are conversation versions) and the
/// inbox feed (positions are the server-wide activity counter) have the same
/// shape, so one loop serves both, over long-polls or a stream.
protocol FeedAnswer: Decodable, Sendable {
    associatedtype Event: Decodable & Sendable
    var events: [Event] { get set }
    var hasMore: Bool { get }
    /// The `since` of the next poll.
    var position: Int64 { get }
    /// The server answered a reset instead of the changes.
    var isReset: Bool { get }
    /// Who is typing, when the answer says (conversation feeds only).
    var typing: [String]? { get set }
    /// The position of one event: only events above `since` are new.
    static func position(of event: Event) -> Int64
    /// The answer made of events a stream delivered together.
    static func streamed(_ events: [Event], position: Int64) -> Self
    /// The answer made of a stream's `typing` event; nil for feeds without typing.
    static func typing(_ users: [String], position: Int64) -> Self?
}

extension FeedAnswer {
    /// Something for a consumer: changes, a reset, or who is typing.
    var isNews: Bool { !events.isEmpty || isReset || typing != nil }
}

/// What a ``FeedPoller`` asks: one request of a feed from `since`, parked up
/// to `wait` when nothing changed yet (nil: answer at once), or the same
/// feed as a stream.
protocol FeedSource: Sendable {
    associatedtype Answer: FeedAnswer
    func answer(from client: ChatHistoryClient, since: Int64, wait: Duration?) async throws -> Answer
    /// The stream's request from `since`: the long-poll's filters, no `wait`.
    func streamEndpoint(since: Int64) -> HistoryEndpoint
}

/// Where a feed starts: what an `AsyncSequence` of a feed holds, and each
/// iterator starts a ``FeedPoller`` from.
struct FeedPlan<Source: FeedSource>: Sendable {
    let client: ChatHistoryClient
    let source: Source
    let since: Int64
}

/// The loop every feed shares: one position, over a Server-Sent Events
/// stream or long-polls (``FeedTransport``), retries with backoff, waits as
/// long as a `Retry-After` asks, cancellation as the end.
///
/// The position only ever becomes the `since` returned by an answer whose
/// events were all handed out (a streamed event's `id`), so a failure (a
/// dropped connection, a server restarting on the same database, a 401
/// `token_expired` answered with a fresh token by ``ChatHistoryClient``'s
/// retry) is simply asked again from the same position after a backoff,
/// with `Last-Event-ID` on a stream: nothing is lost, nothing repeats.
///
/// Before each stream opens, the feed catches up with plain requests
/// (`has_more` followed page by page, as with long-polls), so a consumer
/// meets a long gap as full pages (``ChatScreenModel`` reopens at the
/// newest page then) and the stream carries the live tail.
///
/// A 429 or 503 with `Retry-After` is not a failure of the connection: it
/// neither grows the backoff nor counts toward
/// ``ReconnectPolicy/maximumAttempts``; the feed waits and goes on.
struct FeedPoller<Source: FeedSource> {
    let client: ChatHistoryClient
    let source: Source
    /// The `since` of the next request: the position of the last answer.
    private(set) var position: Int64
    /// The previous answer said more changes are waiting: poll without waiting.
    private var hasMore = false
    private var consecutiveFailures = 0
    /// The stream being read, if one is open.
    private var stream: FeedStreamReader<Source.Answer>?
    /// Before a stream opens, plain requests read what is already there,
    /// page by page (`has_more`), as long-polls would: a consumer sees a
    /// long gap as full pages and can reopen at the newest page instead of
    /// taking it all. The stream then carries the live tail.
    private var needsCatchUp = true
    /// Some stream of this feed delivered something: the next one resumes with `Last-Event-ID`.
    private var resumesStream = false
    /// Automatic mode: streams are not available (the transport or the server) or kept failing.
    private var streamsGivenUp = false
    /// Automatic mode: the last stream failed before delivering anything;
    /// a long-poll goes next, and tells whether the server itself answers.
    private var streamFailedBeforeProbe = false
    /// Automatic mode: streams that failed silent while the long-poll after them worked.
    private var streamStrikes = 0
    /// The typing list last handed out, so an unchanged list is not news.
    private var lastTyping: [String]?

    /// Streams failing this many times in a row where a long-poll then
    /// answered make an automatic feed use long-polls for good.
    static var strikesBeforeLongPolls: Int { 3 }

    init(plan: FeedPlan<Source>) {
        self.client = plan.client
        self.source = plan.source
        self.position = plan.since
    }

    /// Whether the next request is a stream.
    var usesStream: Bool {
        switch client.configuration.feedTransport {
        case .longPoll: false
        case .stream: true
        case .automatic: !streamsGivenUp && !streamFailedBeforeProbe
        }
    }

    /// The next answer of the feed (possibly empty), after as many retries as
    /// the policy allows; nil when the task is cancelled.
    mutating func nextAnswer() async throws -> Source.Answer? {
        while !Task.isCancelled {
            let configuration = client.configuration
            let streaming = usesStream
            do {
                let next: Source.Answer?
                if streaming && needsCatchUp {
                    let answer = try await source.answer(from: client, since: position, wait: nil)
                    needsCatchUp = answer.hasMore
                    next = answer
                } else if streaming {
                    next = try await nextStreamedAnswer()
                } else {
                    next = try await source.answer(from: client, since: position,
                                                   wait: hasMore ? nil : configuration.eventWait)
                    if streamFailedBeforeProbe {
                        // The server answers; the stream did not.
                        streamFailedBeforeProbe = false
                        streamStrikes += 1
                        if streamStrikes >= Self.strikesBeforeLongPolls { streamsGivenUp = true }
                    }
                }
                // nil: the stream ended by itself (the server's limit): reconnect at once.
                guard var answer = next else { continue }
                consecutiveFailures = 0
                // The server never answers an event at or below `since`; dropping
                // one anyway is what keeps "never repeated" true against a buggy peer.
                let since = position
                answer.events.removeAll { Source.Answer.position(of: $0) <= since }
                position = Swift.max(position, answer.position)
                hasMore = answer.hasMore
                if answer.typing != nil {
                    if answer.typing == lastTyping { answer.typing = nil } else { lastTyping = answer.typing }
                }
                return answer
            } catch is CancellationError {
                closeStream()
                return nil
            } catch let error as HistoryClientError {
                let delivered = stream?.deliveredAnything ?? false
                closeStream()
                if case .streamingUnavailable = error, streaming {
                    guard configuration.feedTransport == .automatic else { throw error }
                    streamsGivenUp = true
                    continue
                }
                guard error.isTransient else { throw error }
                if streaming, configuration.feedTransport == .automatic, error.status == nil, !delivered {
                    streamFailedBeforeProbe = true
                }
                let policy = configuration.reconnect
                let delay: Duration
                if let retryAfter = error.retryAfter {
                    delay = policy.delay(retryAfter: retryAfter, randomFraction: Double.random(in: 0..<1))
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
            } catch {
                closeStream()
                throw error
            }
        }
        closeStream()
        return nil
    }

    /// The next answer that is news (changes, a reset, a new typing list),
    /// as the server paged it: a long `has_more` chain (an app back after
    /// an hour) comes one page at a time, so a consumer can apply each page
    /// at once, or stop and reopen at the newest page instead of replaying
    /// the rest. Nil when the task is cancelled.
    mutating func nextNonEmptyAnswer() async throws -> Source.Answer? {
        while true {
            guard let answer = try await nextAnswer() else { return nil }
            if answer.isNews { return answer }
        }
    }

    /// The next answer from the open stream, opening one first if needed;
    /// nil when the stream ended by itself after delivering something.
    private mutating func nextStreamedAnswer() async throws -> Source.Answer? {
        let reader: FeedStreamReader<Source.Answer>
        if let open = stream {
            reader = open
        } else {
            var endpoint = source.streamEndpoint(since: position)
            if resumesStream { endpoint.headers["Last-Event-ID"] = String(position) }
            reader = FeedStreamReader(try await client.openStream(endpoint), position: position)
            stream = reader
        }
        let answer = try await reader.next()
        if reader.deliveredAnything {
            resumesStream = true
            streamStrikes = 0
        }
        if answer == nil {
            closeStream()
            guard reader.deliveredAnything else {
                // Closed at once with nothing said: a failure, or we would spin.
                throw HistoryClientError.transport(URLError(.networkConnectionLost))
            }
        }
        return answer
    }

    private mutating func closeStream() {
        stream?.cancel()
        stream = nil
        needsCatchUp = true
    }
}

/// A feed's answers handed out one event at a time. A reset cannot be one
/// event: it throws ``HistoryFeedReset``.
struct FeedEventIterator<Source: FeedSource> {
    private(set) var poller: FeedPoller<Source>
    private var buffered: [Source.Answer.Event] = []
    private var nextIndex = 0

    init(poller: FeedPoller<Source>) {
        self.poller = poller
    }

    mutating func next() async throws -> Source.Answer.Event? {
        while nextIndex >= buffered.count {
            guard let answer = try await poller.nextAnswer() else { return nil }
            if answer.isReset { throw HistoryFeedReset(position: answer.position) }
            buffered = answer.events
            nextIndex = 0
        }
        defer { nextIndex += 1 }
        return buffered[nextIndex]
    }
}
