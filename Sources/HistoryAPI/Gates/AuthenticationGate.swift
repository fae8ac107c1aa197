import HTTPCore
import HistoryAccess

/// The token of `/v1` and `/metrics` (`AccessMode`): 401 without a valid
/// one. A request without one learns nothing, not even which paths exist,
/// so an unknown `/v1` path is 401 too, and 404/405 come only after it.
/// A failure is charged to the client address's read bucket before any
/// signature check, and past its rate answered 429 instead; the charge's
/// `RateLimit-*` headers go out with the refusal (`RateLimitGate.decorate`).
final class AuthenticationGate: RequestGate {
    let access: AccessMode
    let rateLimits: RequestRateLimits
    let metrics: Metrics
    let logger: Logger

    init(access: AccessMode, rateLimits: RequestRateLimits, metrics: Metrics, logger: Logger) {
        self.access = access
        self.rateLimits = rateLimits
        self.metrics = metrics
        self.logger = logger
    }

    func admit(_ passage: inout Passage) -> HTTPResponse? {
        guard AccessMode.needsCaller(firstSegment: passage.firstSegment) else { return nil }
        let context = passage.context
        // Only a request that is charged needs its client's key (and
        // non-escaping closures cost no allocation on the usual path).
        let authentication = access.authenticate(
            passage.request,
            charge: { rateLimits.chargeAuthentication(ClientKey.peer(context: context)) },
            refund: { rateLimits.refundAuthentication(ClientKey.peer(context: context)) })
        switch authentication {
        case .caller(let caller):
            passage.caller = caller
            return nil
        case .refused(let rejection, let charge):
            let error = APIError(rejection)
            if case .invalid(let reason) = rejection {
                logger.debug("token refused on \(passage.request.method) \(abbreviated(String(passage.path), to: 200)): \(reason)")
            }
            metrics.recordDenied(status: error.status.code, code: error.code.rawValue)
            passage.marks.rateLimit = charge
            return passage.refusal(error)
        case .throttled(let decision):
            metrics.recordDenied(status: 429, code: ErrorCode.rateLimited.rawValue)
            passage.marks.rateLimit = decision
            return passage.refusal(RequestRateLimits.refusal(decision))
        }
    }
}
