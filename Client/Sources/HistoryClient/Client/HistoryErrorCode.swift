/// The contract's snake_case error codes, as a growing set.
///
/// A struct over a string rather than an enum: a newer server may answer a
/// code this client does not know yet, and that must still decode and reach
/// the app unchanged. The known codes are static members, so callers write
/// `catch let error as HistoryClientError where error.code == .conversationNotFound`.
public struct HistoryErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible,
    ExpressibleByStringLiteral {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public init(stringLiteral value: String) {
        self.rawValue = value
    }

    public var description: String { rawValue }

    // MARK: - 400: malformed requests
    public static let badRequest: HistoryErrorCode = "bad_request"
    public static let invalidJSON: HistoryErrorCode = "invalid_json"
    public static let invalidSender: HistoryErrorCode = "invalid_sender"
    public static let invalidBody: HistoryErrorCode = "invalid_body"
    public static let invalidClientID: HistoryErrorCode = "invalid_client_id"
    public static let invalidReplyTo: HistoryErrorCode = "invalid_reply_to"
    public static let invalidTitle: HistoryErrorCode = "invalid_title"
    public static let invalidConversationID: HistoryErrorCode = "invalid_conversation_id"
    public static let invalidCursor: HistoryErrorCode = "invalid_cursor"
    public static let invalidLimit: HistoryErrorCode = "invalid_limit"
    public static let conflictingCursors: HistoryErrorCode = "conflicting_cursors"
    public static let invalidWindow: HistoryErrorCode = "invalid_window"
    public static let invalidVersion: HistoryErrorCode = "invalid_version"
    public static let invalidWait: HistoryErrorCode = "invalid_wait"
    public static let invalidIDRange: HistoryErrorCode = "invalid_id_range"
    public static let invalidMessageID: HistoryErrorCode = "invalid_message_id"

    public static let invalidUserID: HistoryErrorCode = "invalid_user_id"
    public static let invalidRole: HistoryErrorCode = "invalid_role"

    // MARK: - 401, 403: identity and access
    /// A tokens-mode server got no `Authorization: Bearer` header.
    public static let missingToken: HistoryErrorCode = "missing_token"
    /// Malformed, badly signed, unknown key, wrong audience or issuer: a new
    /// token of the same kind would fail the same way.
    public static let invalidToken: HistoryErrorCode = "invalid_token"
    /// The client asks its token provider once more and retries once.
    public static let tokenExpired: HistoryErrorCode = "token_expired"
    /// A user token asked for an administrator's (or an owner's) action.
    public static let forbidden: HistoryErrorCode = "forbidden"
    /// Editing or deleting another user's message.
    public static let notAuthor: HistoryErrorCode = "not_author"
    /// An append whose `sender` is not the token's subject.
    public static let senderMismatch: HistoryErrorCode = "sender_mismatch"

    // MARK: - 404, 405, 409, 415, 421, 422
    public static let notFound: HistoryErrorCode = "not_found"
    public static let conversationNotFound: HistoryErrorCode = "conversation_not_found"
    public static let messageNotFound: HistoryErrorCode = "message_not_found"
    /// Moving the read marker of a user who is not a member (admin tokens, open mode).
    public static let memberNotFound: HistoryErrorCode = "member_not_found"
    public static let methodNotAllowed: HistoryErrorCode = "method_not_allowed"
    public static let conversationExists: HistoryErrorCode = "conversation_exists"
    public static let clientIDConflict: HistoryErrorCode = "client_id_conflict"
    public static let messageDeleted: HistoryErrorCode = "message_deleted"
    public static let replyToNotFound: HistoryErrorCode = "reply_to_not_found"
    public static let unsupportedMediaType: HistoryErrorCode = "unsupported_media_type"
    /// A loopback server refused the `Host` (DNS-rebinding protection).
    public static let misdirectedRequest: HistoryErrorCode = "misdirected_request"

    // MARK: - Transport-level answers of the server
    public static let requestTimeout: HistoryErrorCode = "request_timeout"
    public static let lengthRequired: HistoryErrorCode = "length_required"
    public static let payloadTooLarge: HistoryErrorCode = "payload_too_large"
    public static let expectationFailed: HistoryErrorCode = "expectation_failed"
    public static let headersTooLarge: HistoryErrorCode = "headers_too_large"
    public static let notImplemented: HistoryErrorCode = "not_implemented"
    public static let httpVersionNotSupported: HistoryErrorCode = "http_version_not_supported"

    // MARK: - 429: transient, wait `Retry-After`
    /// The client's read or write rate is spent; the answer says when to come back.
    public static let rateLimited: HistoryErrorCode = "rate_limited"
    /// Too many long-polls of this client are parked at once.
    public static let tooManyRequests: HistoryErrorCode = "too_many_requests"

    // MARK: - 5xx
    public static let internalError: HistoryErrorCode = "internal_error"
    public static let tooManyConnections: HistoryErrorCode = "too_many_connections"
    public static let shuttingDown: HistoryErrorCode = "shutting_down"
    public static let storeUnavailable: HistoryErrorCode = "store_unavailable"
    /// 507: the server's disk is full; nothing was stored.
    public static let insufficientStorage: HistoryErrorCode = "insufficient_storage"
}
