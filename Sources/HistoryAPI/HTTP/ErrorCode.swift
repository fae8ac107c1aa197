import HTTPCore
import HistoryStore

/// Every error code the server sends, each with the one status it comes with.
///
/// `openapi.yaml`'s `ErrorCode` enum is checked against these cases by
/// `scripts/check_openapi.py`, which reads this file: keep one
/// `case name = "snake_case"` per line.
///
/// The codes of malformed HTTP and of connection limits are sent by HTTPCore
/// before a request reaches this layer; they are listed here too, so this
/// enum is the whole set a client can meet.
public enum ErrorCode: String, Hashable, Sendable, CaseIterable {
    // Malformed HTTP, answered by HTTPCore.
    case badRequest = "bad_request"
    case requestTimeout = "request_timeout"
    case payloadTooLarge = "payload_too_large"
    case expectationFailed = "expectation_failed"
    case headersTooLarge = "headers_too_large"
    case notImplemented = "not_implemented"
    case httpVersionNotSupported = "http_version_not_supported"
    case tooManyConnections = "too_many_connections"

    // Routing.
    case notFound = "not_found"
    case methodNotAllowed = "method_not_allowed"

    // A body that breaks a rule.
    case invalidJSON = "invalid_json"
    case invalidSender = "invalid_sender"
    case invalidBody = "invalid_body"
    case invalidClientID = "invalid_client_id"
    case invalidReplyTo = "invalid_reply_to"
    case invalidTitle = "invalid_title"
    case invalidConversationID = "invalid_conversation_id"
    case invalidRole = "invalid_role"

    // A path or query parameter that breaks a rule.
    case invalidMessageID = "invalid_message_id"
    case invalidUserID = "invalid_user_id"
    case invalidCursor = "invalid_cursor"
    case invalidLimit = "invalid_limit"
    case conflictingCursors = "conflicting_cursors"
    case invalidWindow = "invalid_window"
    case invalidVersion = "invalid_version"
    case invalidWait = "invalid_wait"
    case invalidIDRange = "invalid_id_range"
    case invalidTime = "invalid_time"

    // Identity and access: authentication (401), the access policy (403),
    // the browser checks (415, 421).
    case missingToken = "missing_token"
    case invalidToken = "invalid_token"
    case tokenExpired = "token_expired"
    case forbidden = "forbidden"
    case notAuthor = "not_author"
    case senderMismatch = "sender_mismatch"
    case unsupportedMediaType = "unsupported_media_type"
    case misdirectedRequest = "misdirected_request"

    // What the store found.
    case conversationNotFound = "conversation_not_found"
    case messageNotFound = "message_not_found"
    case conversationExists = "conversation_exists"
    case clientIDConflict = "client_id_conflict"
    case messageDeleted = "message_deleted"
    case replyToNotFound = "reply_to_not_found"
    case memberNotFound = "member_not_found"

    // A client over its limits.
    case rateLimited = "rate_limited"
    case tooManyRequests = "too_many_requests"

    // The server itself.
    case internalError = "internal_error"
    case insufficientStorage = "insufficient_storage"
    case storeUnavailable = "store_unavailable"
    case shuttingDown = "shutting_down"

    public var status: HTTPStatus {
        switch self {
        case .badRequest, .invalidJSON, .invalidSender, .invalidBody, .invalidClientID, .invalidReplyTo, .invalidTitle,
             .invalidConversationID, .invalidMessageID, .invalidCursor, .invalidLimit, .conflictingCursors,
             .invalidWindow, .invalidVersion, .invalidWait, .invalidIDRange, .invalidTime, .invalidUserID, .invalidRole:
            .badRequest
        case .missingToken, .invalidToken, .tokenExpired: HTTPStatus(code: 401, reason: "Unauthorized")
        case .forbidden, .notAuthor, .senderMismatch: HTTPStatus(code: 403, reason: "Forbidden")
        case .unsupportedMediaType: .unsupportedMediaType
        case .misdirectedRequest: HTTPStatus(code: 421, reason: "Misdirected Request")
        case .notFound, .conversationNotFound, .messageNotFound, .memberNotFound: .notFound
        case .methodNotAllowed: .methodNotAllowed
        case .requestTimeout: .requestTimeout
        case .conversationExists, .clientIDConflict, .messageDeleted: .conflict
        case .payloadTooLarge: .contentTooLarge
        case .expectationFailed: .expectationFailed
        case .replyToNotFound: .unprocessableContent
        case .headersTooLarge: .requestHeaderFieldsTooLarge
        case .rateLimited, .tooManyRequests: HTTPStatus(code: 429, reason: "Too Many Requests")
        case .internalError: .internalServerError
        case .notImplemented: .notImplemented
        case .tooManyConnections, .storeUnavailable, .shuttingDown: .serviceUnavailable
        case .httpVersionNotSupported: .httpVersionNotSupported
        case .insufficientStorage: .insufficientStorage
        }
    }

    /// The code for a value that breaks a rule: a body field has its own
    /// (`invalid_sender`), query parameters share their family's
    /// (`before`, `after` and `around` are all `invalid_cursor`).
    public init(invalid field: InputField) {
        switch field {
        case .sender: self = .invalidSender
        case .body: self = .invalidBody
        case .clientID: self = .invalidClientID
        case .replyTo: self = .invalidReplyTo
        case .title: self = .invalidTitle
        case .conversationID: self = .invalidConversationID
        case .before, .after, .around, .cursor: self = .invalidCursor
        case .limit: self = .invalidLimit
        case .window: self = .invalidWindow
        case .aroundTime: self = .invalidTime
        case .since: self = .invalidVersion
        case .minID, .maxID: self = .invalidIDRange
        case .wait: self = .invalidWait
        case .role: self = .invalidRole
        // A marker names a message: the code of every message id a client sends.
        case .lastReadID: self = .invalidMessageID
        }
    }
}
