import HTTPCore
import HistoryAccess

/// Authentication as a request needs it: which paths need a caller, and
/// the caller of a request's `Authorization`, charged to its client's rate.
extension AccessMode {
    /// `/v1` and everything under it, and `/metrics`, need a caller;
    /// `/healthz` and unknown paths outside `/v1` do not (the latter are
    /// 404 for everyone, and nothing behind them exists to protect). The
    /// first segment is compared percent-decoded, as the router compares
    /// it, so `/%761/...` cannot slip past; a segment that does not decode
    /// needs a caller too. `firstSegment`: `Passage.firstSegment`.
    static func needsCaller(firstSegment: String?) -> Bool {
        guard let first = firstSegment else { return true }
        return first == "v1" || first == "metrics"
    }

    /// What authentication decided.
    enum Authentication {
        case caller(Caller)
        /// 401; `charge` is the client's read bucket after this request
        /// took from it (nil when reads are not limited).
        case refused(TokenRejection, charge: TokenBucket.Decision?)
        /// 429: the client's read bucket was empty, so the token was not checked.
        case throttled(TokenBucket.Decision)
    }

    /// Who is asking: the administrator in open mode, else the token's caller.
    ///
    /// A request whose authentication fails is charged to its client's read
    /// bucket (`charge`), and one that would need a signature check is
    /// charged before it (then given back, `refund`, when the token is
    /// valid): a flood of bad tokens costs a bucket lookup each once the
    /// bucket is empty, not a signature check each. A token verified before
    /// (cached) costs nothing here.
    func authenticate(_ request: HTTPRequest, charge: () -> TokenBucket.Decision?,
                      refund: () -> Void) -> Authentication {
        switch self {
        case .open:
            return .caller(.admin(subject: nil))
        case .tokens(let verifier):
            var decision: TokenBucket.Decision?
            var charged = false
            let values = request.headers.values(of: "Authorization")
            let result: Result<Caller, TokenRejection> = if values.count > 1 {
                .failure(.invalid("several Authorization fields"))
            } else {
                verifier.verify(authorization: values.first.map { Substring($0) }) {
                    charged = true
                    decision = charge()
                    return decision?.allowed ?? true
                }
            }
            switch result {
            case .success(let caller):
                if charged { refund() }
                return .caller(caller)
            case .failure(let rejection):
                if !charged { decision = charge() }
                if let decision, !decision.allowed { return .throttled(decision) }
                return .refused(rejection, charge: decision)
            }
        }
    }
}
