import Foundation

/// How a ``ChatHistoryClient`` talks to the server, each setting with its default.
public struct HistoryClientConfiguration: Sendable {
    /// How long an ordinary request may take. Default: 15 seconds (mobile
    /// networks stall; a page of 50 messages is a few kilobytes).
    public var requestTimeout: Duration
    /// Added to a long-poll's `wait` to get its timeout, so a poll the server
    /// answers on time is never cut off by the client first. Default: 10 seconds.
    public var longPollMargin: Duration
    /// The `wait` of the event stream's long-polls (0...60). Default: 30 seconds,
    /// under the idle timeouts of the usual proxies and load balancers.
    public var eventWait: Duration
    /// How the event stream reconnects after a failure.
    public var reconnect: ReconnectPolicy
    /// How feeds receive changes: Server-Sent Events, long-polls, or
    /// streams with long-polls as the fallback. Default: ``FeedTransport/automatic``.
    public var feedTransport: FeedTransport
    /// How long a stream may stay silent before the client takes it for
    /// dead and reconnects: the server sends a comment every 20 s of
    /// silence, so silence this long means a connection (or a buffering
    /// proxy) that no longer delivers. Default: 45 seconds.
    public var streamIdleTimeout: Duration
    /// Extra headers for every request (a tracing id, a proxy's key).
    public var additionalHeaders: [String: String]
    /// The bearer token for a tokens-mode server, asked for before every
    /// request (and once more after a 401 `token_expired`); nil for a server
    /// in open mode. Default: nil.
    public var tokenProvider: HistoryTokenProvider?
    /// Sends `Accept-Encoding: gzip`, so pages of 1 KiB and more come
    /// compressed (about a fifth of their bytes). `URLSession` inflates them
    /// before the transport returns, on Apple platforms and on Linux alike;
    /// false sends `Accept-Encoding: identity` (without it, Linux's
    /// `URLSession` would ask for gzip on its own), for a custom transport
    /// that does not inflate. An `Accept-Encoding` in `additionalHeaders`
    /// wins over both. Default: true.
    public var acceptsGzip: Bool
    /// Asks again with `If-None-Match`: the client keeps the `ETag` and the
    /// decoded answer of the last 64 GETs of a resource or a page (a
    /// conversation, a page of messages, one message, members, an inbox
    /// page; up to 8 MiB of bodies), and a second request for one of them
    /// carries its tag. The server answers 304 with no body when nothing
    /// changed, and the client returns the answer it holds: the same value a
    /// 200 would have decoded, since the tag changes whenever the bytes
    /// would. A chat screen reopening the newest page it holds, an inbox
    /// reloading its first page, a conversation's members read again cost
    /// a few hundred bytes instead of the page. Default: true.
    public var revalidates: Bool
    /// The intervals ``ChatHistoryClient/setTyping(_:in:)`` keeps between
    /// the typing calls it sends (a fresh throttle is copied from this one
    /// per conversation). Default: the contract's 2 s quiet period (counted
    /// from each call's answer) and a renewal every 4 s; longer intervals
    /// are always safe.
    public var typingThrottle: TypingThrottle

    public init(requestTimeout: Duration = .seconds(15), longPollMargin: Duration = .seconds(10),
                eventWait: Duration = .seconds(30), reconnect: ReconnectPolicy = ReconnectPolicy(),
                feedTransport: FeedTransport = .automatic, streamIdleTimeout: Duration = .seconds(45),
                additionalHeaders: [String: String] = [:], tokenProvider: HistoryTokenProvider? = nil,
                acceptsGzip: Bool = true, typingThrottle: TypingThrottle = TypingThrottle(),
                revalidates: Bool = true) {
        self.requestTimeout = requestTimeout
        self.longPollMargin = longPollMargin
        self.eventWait = eventWait
        self.reconnect = reconnect
        self.feedTransport = feedTransport
        self.streamIdleTimeout = streamIdleTimeout
        self.additionalHeaders = additionalHeaders
        self.tokenProvider = tokenProvider
        self.acceptsGzip = acceptsGzip
        self.typingThrottle = typingThrottle
        self.revalidates = revalidates
    }
}

/// How a feed (a conversation's changes, an inbox's) reaches the client.
public enum FeedTransport: Hashable, Sendable {
    /// Server-Sent Events where the transport can deliver a body as it
    /// arrives (``URLSessionTransport`` can, on Darwin and Linux) and the
    /// server answers `text/event-stream`; long-polls otherwise, and for
    /// good once streams failed three times in a row where a long-poll
    /// then worked (a proxy that buffers or cuts streams).
    case automatic
    /// Server-Sent Events only: a server or transport without them is an
    /// error (``HistoryClientError/streamingUnavailable(reason:)``).
    case stream
    /// Long-polls only, as before streams existed.
    case longPoll
}

/// Exponential backoff with a ceiling, for the event stream's reconnects.
///
/// The n-th consecutive failure waits `initialDelay * multiplier^(n-1)`,
/// at most `maximumDelay`, minus up to `jitter` of it at random so a
/// thousand phones that lost the same server do not come back in lockstep.
/// A successful poll resets the count.
public struct ReconnectPolicy: Sendable, Hashable {
    /// Default: 100 ms.
    public var initialDelay: Duration
    /// Default: 2.
    public var multiplier: Double
    /// Default: 5 seconds.
    public var maximumDelay: Duration
    /// 0...1, the share of each delay that may be taken off at random. Default: 0.2.
    public var jitter: Double
    /// Consecutive failures after which the stream throws the last error;
    /// nil retries until the consuming task is cancelled (a phone may be
    /// offline for an hour). Default: nil.
    public var maximumAttempts: Int?

    public init(initialDelay: Duration = .milliseconds(100), multiplier: Double = 2,
                maximumDelay: Duration = .seconds(5), jitter: Double = 0.2, maximumAttempts: Int? = nil) {
        self.initialDelay = initialDelay
        self.multiplier = multiplier
        self.maximumDelay = maximumDelay
        self.jitter = jitter
        self.maximumAttempts = maximumAttempts
    }

    /// The delay before retrying after `failures` consecutive failures (>= 1),
    /// with `randomFraction` in 0..<1 choosing the jitter.
    public func delay(afterFailures failures: Int, randomFraction: Double) -> Duration {
        let exponent = Double(max(0, failures - 1))
        let initial = initialDelay.seconds
        let ceiling = maximumDelay.seconds
        let growth = pow(max(multiplier, 1), min(exponent, 64))
        let base = min(initial * growth, ceiling)
        let jittered = base * (1 - min(max(jitter, 0), 1) * min(max(randomFraction, 0), 1))
        return .milliseconds(Int64((jittered * 1000).rounded()))
    }

    /// The wait after an answer with `Retry-After` (a 429, a 503 while the
    /// server restarts): at least what the server asked and at least
    /// ``initialDelay``, plus up to ``jitter`` of it at random, so clients
    /// the server refused together do not all come back in the same instant.
    public func delay(retryAfter: Duration, randomFraction: Double) -> Duration {
        let base = Swift.max(retryAfter, initialDelay).seconds
        let extra = base * min(max(jitter, 0), 1) * min(max(randomFraction, 0), 1)
        return .milliseconds(Int64(((base + extra) * 1000).rounded()))
    }
}

extension Duration {
    /// As a `TimeInterval`, for URLRequest and arithmetic.
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
