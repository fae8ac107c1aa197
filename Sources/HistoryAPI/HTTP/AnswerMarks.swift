import HTTPCore
import HistoryAccess

/// What the gates noted about a request on its way in that its answer
/// carries on the way out (`RequestGate.decorate`): a few optional fields,
/// not a list of closures, so a request's exit allocates nothing.
struct AnswerMarks: Sendable {
    /// The client a trusted proxy forwarded for, as the access log names it.
    var client: String?
    /// A listed CORS origin: its `Access-Control-*` headers.
    var corsOrigin: String?
    /// CORS is on, so the answer varies by `Origin` even for another origin.
    var variesByOrigin = false
    /// The rate-limit bucket that was charged: its `RateLimit-*` headers.
    var rateLimit: TokenBucket.Decision?
}
