import HTTPCore
import HistoryAccess
import HistoryStore

/// The answers of authentication, authorization and the browser checks.
///
/// 401s carry the RFC 6750 §3 challenge: a request without credentials
/// gets the bare `Bearer realm="history"` (no error code, §3.1), a refused
/// token gets `error="invalid_token"` beside it.
extension APIError {
    static let realm = #"Bearer realm="history""#

    /// The 401 for a refused or absent token.
    public init(_ rejection: TokenRejection) {
        switch rejection {
        case .missing:
            self = APIError(.missingToken, "this request needs Authorization: Bearer <token>",
                            headers: ["WWW-Authenticate": Self.realm])
        case .invalid:
            // The reason stays in the log: it could help someone forging tokens.
            self = APIError(.invalidToken, "the token is not valid",
                            headers: ["WWW-Authenticate": Self.realm + #", error="invalid_token", error_description="the token is not valid""#])
        case .expired:
            self = APIError(.tokenExpired, "the token has expired",
                            headers: ["WWW-Authenticate": Self.realm + #", error="invalid_token", error_description="the token has expired""#])
        }
    }

    /// The answer to a refused `AccessPolicy` decision on `conversation`
    /// (nil for the few actions not about one); nil when allowed.
    ///
    /// A non-member's 404 is built by the same `StoreError` mapping as a
    /// missing conversation's, so the two are the same bytes.
    init?(_ decision: AccessPolicy.Decision, conversation: ConversationID?) {
        switch decision {
        case .allow:
            return nil
        case .conversationNotFound:
            if let conversation {
                self = APIError(StoreError.conversationNotFound(conversation))
            } else {
                self = APIError.conversationNotFound(nil)
            }
        case .forbidden:
            self = APIError(AccessRefusal.forbidden)
        case .notAuthor:
            self = APIError(AccessRefusal.notAuthor)
        case .senderMismatch:
            self = APIError(AccessRefusal.senderMismatch)
        }
    }

    /// The answer to a refusal the store decided (`AccessCheck`); a
    /// non-member's never reaches here, the store answers it as a missing
    /// conversation.
    init(_ refusal: AccessRefusal) {
        switch refusal {
        case .notAMember: self = APIError.conversationNotFound(nil)
        case .forbidden: self = APIError(.forbidden, "this token may not do that")
        case .notAuthor: self = APIError(.notAuthor, "only the message's sender (or an admin) may change it")
        case .senderMismatch: self = APIError(.senderMismatch, "sender must be the token's subject (or be left out)")
        }
    }

    static func misdirectedRequest(_ host: String) -> APIError {
        APIError(.misdirectedRequest, "this server does not answer for host '\(abbreviated(host, to: 80))'")
    }

    static let unsupportedMediaType = APIError(.unsupportedMediaType,
                                               "the body must be Content-Type: application/json (charset utf-8)")

    static func invalidUserID(_ segment: String?) -> APIError {
        APIError(.invalidUserID, "a user id is 1 to 64 characters of [A-Za-z0-9_.@-]"
                     + (segment.map { ", not '\(abbreviated($0, to: 80))'" } ?? ""))
    }
}
