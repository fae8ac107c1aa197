import HTTPCore
import HistoryStore
import StrictJSON

/// An error that knows its HTTP answer: the contract's code (which fixes
/// the status) and a human message.
///
/// This file is the one place where a `StoreError`, a JSON problem or a
/// request's bad parameter becomes a status, so two handlers can never
/// answer the same failure differently.
///
/// ```swift
/// throw APIError(.invalidCursor, "before must be a message id or position")
/// ```
public struct APIError: Error, Hashable, Sendable, CustomStringConvertible {
    public var code: ErrorCode
    public var message: String
    /// What the answer says beside its body: `Allow` of a 405, the
    /// `WWW-Authenticate` challenge of a 401 (RFC 6750 §3), `Retry-After`
    /// of a 429. Any header, so a new one needs no new field.
    public var headers: HTTPHeaders

    public init(_ code: ErrorCode, _ message: String, headers: HTTPHeaders = [:]) {
        self.code = code
        self.message = message
        self.headers = headers
    }

    /// A value of the request that breaks a rule, under its field's code.
    public init(invalid field: InputField, _ message: String) {
        self.init(ErrorCode(invalid: field), message)
    }

    /// A broken rule of the model, under its field's code, in the rule's words.
    public init(_ violation: RuleViolation) {
        self.init(invalid: violation.field, violation.message)
    }

    /// Runs a rule of the model (`MessageRules`, `PageQuery.check()`...),
    /// answering its violation as the field's 400.
    public static func enforcing<T>(_ rule: () throws(RuleViolation) -> T) throws(APIError) -> T {
        do {
            return try rule()
        } catch {
            throw APIError(error)
        }
    }

    public var status: HTTPStatus { code.status }

    public var description: String { "\(status.code) \(code.rawValue): \(message)" }

    /// The contract's error body with this status.
    public func response(route: String?) -> HTTPResponse {
        .error(status, code: code.rawValue, message: message, headers: headers, route: route)
    }

    // MARK: - Request errors

    public static func notFound(_ path: some StringProtocol) -> APIError {
        APIError(.notFound, "no resource at \(path)")
    }

    public static func methodNotAllowed(_ method: HTTPMethod, allow: [HTTPMethod]) -> APIError {
        let list = allow.map(\.rawValue).joined(separator: ", ")
        return APIError(.methodNotAllowed, "\(method.rawValue) is not allowed here; allowed: \(list)",
                        headers: ["Allow": list])
    }

    public static func invalidJSON(_ error: JSONReadError) -> APIError {
        APIError(.invalidJSON, "the body is not valid JSON: \(error)")
    }

    public static func invalidMessageID(_ segment: String?) -> APIError {
        APIError(.invalidMessageID,
                 "the message id in the path must be a positive 64-bit integer" + (segment.map { ", not '\($0)'" } ?? ""))
    }

    /// A path conversation id that is not a valid id names no conversation.
    public static func conversationNotFound(_ segment: String?) -> APIError {
        APIError(.conversationNotFound, "no conversation " + (segment.map { "'\($0)'" } ?? "with that id"))
    }

    public static let shuttingDown = APIError(.shuttingDown, "the server is shutting down")

    public static let storeUnavailable = APIError(.storeUnavailable, "the store does not answer")

    // MARK: - Store errors

    /// Maps every `StoreError` to its status and code.
    ///
    /// Storage details (SQLite codes and messages) never reach the client:
    /// they go to the log, the client reads "internal_error".
    public init(_ error: StoreError) {
        switch error {
        case .conversationNotFound(let id):
            self = APIError(.conversationNotFound, "no conversation '\(id)'")
        case .messageNotFound(let conversation, let messageID):
            self = APIError(.messageNotFound, "no message \(messageID) in conversation '\(conversation)'")
        case .memberNotFound(let conversation, let user):
            self = APIError(.memberNotFound, "'\(user)' is not a member of conversation '\(conversation)'")
        case .conversationExists(let id):
            self = APIError(.conversationExists, "conversation '\(id)' already exists")
        case .clientIDConflict(let clientID):
            self = APIError(.clientIDConflict,
                            "client_id '\(clientID)' was used before in this conversation with another sender or body")
        case .messageDeleted(let messageID):
            self = APIError(.messageDeleted, "message \(messageID) is deleted and cannot be edited")
        case .replyTargetNotFound(let messageID):
            self = APIError(.replyToNotFound, "reply_to names no message of this conversation: \(messageID)")
        case .versionAhead(let requested, let current):
            self = APIError(.invalidVersion, "since (\(requested)) is greater than the conversation's version (\(current))")
        case .invalid(let field, let reason):
            self = APIError(invalid: field, "\(field.name) \(reason)")
        case .invalidSetting:
            // A setting of the store itself (its reader count...): our bug, not the client's.
            self = APIError(.internalError, "the store failed; the request was not applied")
        case .storage where error.isStorageFull, .idSpaceExhausted:
            // RFC 4918 §11.5: the server cannot store what the request needs.
            // Not a bug of ours nor of the client's: retry once there is room
            // (a used-up id space is the same answer: nothing more fits).
            self = APIError(.insufficientStorage, "the server's storage is full; the request was not applied")
        case .storage:
            self = APIError(.internalError, "the store failed; the request was not applied")
        case .migration, .unavailable:
            self = APIError.storeUnavailable
        case .closed:
            self = APIError.shuttingDown
        case .refused(let refusal):
            self = APIError(refusal)
        }
    }
}
