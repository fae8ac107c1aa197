import HTTPCore
import HistoryAccess

/// The caller's read or write rate (`RequestRateLimits`): after
/// authentication, so it counts per token `sub`, and before any store
/// work; 429 `rate_limited` past it. Every answer of a charged request
/// carries the bucket's `RateLimit-*` headers, whichever gate charged it.
final class RateLimitGate: RequestGate {
    let rateLimits: RequestRateLimits
    let metrics: Metrics

    init(rateLimits: RequestRateLimits, metrics: Metrics) {
        self.rateLimits = rateLimits
        self.metrics = metrics
    }

    func admit(_ passage: inout Passage) -> HTTPResponse? {
        guard let decision = rateLimits.check(passage.request, firstSegment: passage.firstSegment, caller: passage.caller,
                                              context: passage.context) else { return nil }
        passage.marks.rateLimit = decision
        guard decision.allowed else {
            metrics.recordDenied(status: 429, code: ErrorCode.rateLimited.rawValue)
            return passage.refusal(RequestRateLimits.refusal(decision))
        }
        return nil
    }

    func decorate(_ response: inout HTTPResponse, marks: AnswerMarks) {
        if let decision = marks.rateLimit { RequestRateLimits.addHeaders(decision, to: &response) }
    }
}
