/// Why a request's bearer token was refused.
///
/// Each case is one 401 error code of the contract. The reason carried by
/// `invalid` is for the server's log only: telling a client exactly which
/// check failed helps an attacker more than an honest client, and it never
/// contains the token, which is a credential.
public enum TokenRejection: Error, Hashable, Sendable {
    /// No `Authorization` header: `missing_token`.
    case missing
    /// Malformed, bad signature, wrong `alg`, unknown `kid`, wrong `aud` or
    /// `iss`, too long, a claim of the wrong type: `invalid_token`.
    case invalid(String)
    /// Past `exp` plus the clock leeway: `token_expired`, the one failure a
    /// client fixes by fetching a fresh token and retrying.
    case expired

    /// The contract's error code for this rejection.
    public var code: String {
        switch self {
        case .missing: "missing_token"
        case .invalid: "invalid_token"
        case .expired: "token_expired"
        }
    }
}
