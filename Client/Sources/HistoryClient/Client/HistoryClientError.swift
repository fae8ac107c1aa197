import Foundation

/// Everything a ``ChatHistoryClient`` call can fail with.
///
/// Three different failures need three different reactions, so they are
/// three cases: the server answered with the contract's error (show it, or
/// fix the request: ``server(_:)``), the request never got an answer (retry
/// later: ``transport(_:)``), or the answer could not be read (a proxy's HTML
/// page, a server from another version: ``undecodableResponse(status:reason:)``).
/// Task cancellation is not an error of this type: it surfaces as
/// `CancellationError`, as Swift concurrency expects.
public enum HistoryClientError: Error, Sendable, CustomStringConvertible {
    /// The server answered `{"error":{"code","message"}}` with a non-2xx status.
    case server(HistoryServerError)
    /// No answer: connection refused or dropped, DNS, TLS, timeout.
    case transport(any Error)
    /// An answer that is not what the contract says for this status.
    case undecodableResponse(status: Int, reason: String)
    /// The request could not be built (e.g. a base URL that cannot take a path).
    case invalidRequest(reason: String)
    /// The configured ``HistoryTokenProvider`` threw this instead of giving a
    /// token; nothing was sent.
    case tokenUnavailable(any Error)
    /// A feed configured for ``FeedTransport/stream`` could not stream: the
    /// transport cannot deliver a body as it arrives, or the server did not
    /// answer `text/event-stream`.
    case streamingUnavailable(reason: String)

    /// The contract's error code, when the server answered one.
    public var code: HistoryErrorCode? {
        if case .server(let error) = self { error.code } else { nil }
    }

    /// How long the server asked the client to wait before asking again
    /// (`Retry-After` of a 429 or 503), when it said.
    public var retryAfter: Duration? {
        if case .server(let error) = self { error.retryAfter } else { nil }
    }

    /// The HTTP status, when there was an answer.
    public var status: Int? {
        switch self {
        case .server(let error): error.status
        case .undecodableResponse(let status, _): status
        case .transport, .invalidRequest, .tokenUnavailable, .streamingUnavailable: nil
        }
    }

    /// Whether the same request may succeed later unchanged: no answer at all,
    /// or a server that is restarting, overloaded, between stores or out of
    /// disk (507: nothing was stored, and a post retried with its
    /// `client_id` is stored once), or a 429 (`rate_limited`,
    /// `too_many_requests`: wait ``retryAfter``, then ask again). The event stream reconnects on these and
    /// gives up on the others.
    public var isTransient: Bool {
        switch self {
        case .transport:
            true
        case .server(let error):
            error.status == 503 || error.status == 502 || error.status == 504 || error.status == 408
                || error.status == 507 || error.status == 429 || error.code == .internalError
                || error.code == .rateLimited || error.code == .tooManyRequests
        case .undecodableResponse(let status, _):
            status == 502 || status == 503 || status == 504
        case .invalidRequest, .tokenUnavailable, .streamingUnavailable:
            // A provider that cannot mint a token (signed out, backend refusing)
            // will not start to by itself: the app must act.
            false
        }
    }

    public var description: String {
        switch self {
        case .server(let error): "\(error)"
        case .transport(let error): "transport error: \(error)"
        case .undecodableResponse(let status, let reason): "undecodable response (HTTP \(status)): \(reason)"
        case .invalidRequest(let reason): "invalid request: \(reason)"
        case .tokenUnavailable(let error): "the token provider failed: \(error)"
        case .streamingUnavailable(let reason): "no event stream: \(reason)"
        }
    }
}

/// Thrown by the one-event-at-a-time feeds (``HistoryEventStream``,
/// ``InboxFeed``) when the server answered a reset: more changed after the
/// feed's position than it replays. The state built from the feed is stale
/// beyond repair: reload it (the newest page, the inbox's first page) and
/// start a new feed from ``position`` or from what the reload says. The
/// `batches` forms yield the reset as a batch instead, and
/// ``ChatScreenModel``, ``ConversationFeed`` and ``LiveInbox`` reopen by
/// themselves.
public struct HistoryFeedReset: Error, Hashable, Sendable {
    /// The conversation's version (or the inbox's activity) the reset was answered at.
    public var position: Int64

    public init(position: Int64) {
        self.position = position
    }
}

/// The contract's error answer: HTTP status plus `{"error":{"code","message"}}`.
public struct HistoryServerError: Error, Hashable, Sendable, CustomStringConvertible {
    public var status: Int
    public var code: HistoryErrorCode
    /// Human text from the server; names the field and the rule for validation errors.
    public var message: String
    /// The answer's `Retry-After` (whole seconds, or an HTTP date), if any:
    /// a 429 always carries one, and feeds wait at least that long.
    public var retryAfter: Duration?

    public init(status: Int, code: HistoryErrorCode, message: String, retryAfter: Duration? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.retryAfter = retryAfter
    }

    /// Reads a `Retry-After` value: delta-seconds, or an IMF-fixdate
    /// (RFC 9110 section 10.2.3). Nil when absent or unreadable.
    public static func parseRetryAfter(_ value: String?, now: Date = Date()) -> Duration? {
        guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        if let seconds = Int64(value), seconds >= 0 {
            return .seconds(Swift.min(seconds, 3600))
        }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        guard let date = formatter.date(from: value) else { return nil }
        let seconds = Swift.min(Swift.max(date.timeIntervalSince(now), 0), 3600)
        return .milliseconds(Int64(seconds * 1000))
    }

    public var description: String { "HTTP \(status) \(code): \(message)" }
}

/// The error body's shape, read only to build ``HistoryServerError``.
struct ErrorEnvelope: Decodable {
    struct Body: Decodable {
        var code: String
        var message: String
    }

    var error: Body
}
