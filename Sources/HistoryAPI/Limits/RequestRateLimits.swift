import HTTPCore
import HistoryAccess

/// The read and write rates of docs/API.md, applied to each `/v1` request
/// before it is routed, keyed by `ClientKey`.
///
/// Which requests are writes: every `/v1` method but `GET` and `HEAD`
/// (creating conversations, posting, editing, deleting, member changes);
/// those cost disk for everyone, so their rate is the lower one. Reads are
/// the rest of `/v1`. `/healthz` and `/metrics` are not limited: they are
/// for the operator's probes.
///
/// Every limited request's answer carries `RateLimit-Limit` (the burst),
/// `RateLimit-Remaining` and `RateLimit-Reset` (seconds until the bucket
/// is full), so a client can slow down before it is refused; a refusal is
/// 429 `rate_limited` with `Retry-After` too.
struct RequestRateLimits: Sendable {
    let reads: RateLimiter?
    let writes: RateLimiter?
    /// Monotonic nanoseconds; a parameter so tests could choose the instants.
    let now: @Sendable () -> UInt64

    init(_ limits: ClientLimits, now: @escaping @Sendable () -> UInt64 = RequestRateLimits.monotonicNanoseconds) {
        reads = limits.reads.map { RateLimiter(limit: $0) }
        writes = limits.writes.map { RateLimiter(limit: $0) }
        self.now = now
    }

    /// The decision for `request`, or nil when no limit applies to it
    /// (a path outside `/v1`, a rate that is off, an admin token).
    /// `firstSegment` is the path's first segment decoded as the router
    /// decodes it (`Passage.firstSegment`): `/%761/...` is `/v1/...` and
    /// pays the same; a path whose first segment does not decode (nil) pays too.
    func check(_ request: HTTPRequest, firstSegment: String?, caller: Caller?,
               context: any RequestContext) -> TokenBucket.Decision? {
        guard firstSegment.map({ $0 == "v1" }) ?? true else { return nil }
        let isRead = request.method == .get || request.method == .head
        guard let limiter = isRead ? reads : writes,
              let key = ClientKey(caller: caller, context: context) else { return nil }
        return limiter.take(key, now: now())
    }

    /// Charges a request whose token may fail to `key` (its client
    /// address) on the read bucket, whatever its method: called before its
    /// signature is checked, so a flood of bad tokens is refused 429 at the
    /// price of a table lookup rather than a signature check each (docs/API.md,
    /// "Edges"). nil when reads are not limited.
    func chargeAuthentication(_ key: ClientKey) -> TokenBucket.Decision? {
        reads?.take(key, now: now())
    }

    /// The charge of a request whose token turned out valid: its caller's
    /// own rate applies instead.
    func refundAuthentication(_ key: ClientKey) {
        reads?.giveBack(key, now: now())
    }

    /// The 429 for a refused request, with `Retry-After` (its `RateLimit-*`
    /// headers are `RateLimitGate`'s decoration).
    static func refusal(_ decision: TokenBucket.Decision) -> APIError {
        let seconds = decision.retryAfterSeconds
        return APIError(.rateLimited, "too many requests; retry in \(seconds) second\(seconds == 1 ? "" : "s")",
                        headers: ["Retry-After": String(seconds)])
    }

    /// `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset`.
    static func addHeaders(_ decision: TokenBucket.Decision, to response: inout HTTPResponse) {
        response.headers.add(name: "RateLimit-Limit", value: String(decision.limit))
        response.headers.add(name: "RateLimit-Remaining", value: String(decision.remaining))
        response.headers.add(name: "RateLimit-Reset", value: String(decision.resetSeconds))
    }

    @Sendable static func monotonicNanoseconds() -> UInt64 {
        let elapsed = ContinuousClock.now - origin
        let (seconds, attoseconds) = elapsed.components
        return UInt64(max(seconds, 0)) &* 1_000_000_000 &+ UInt64(max(attoseconds, 0) / 1_000_000_000)
    }

    private static let origin = ContinuousClock.now
}
