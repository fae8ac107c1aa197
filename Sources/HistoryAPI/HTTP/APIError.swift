import HTTPCore
import HistoryStore

/// An error that knows its HTTP answer: status, the contract's snake_case
/// code and a human message.
///
/// This file is the one place where a `StoreError`, a JSON problem or a
/// request's bad parameter becomes a status, so two handlers can never
/// answer the same failure differently.
///
/// ```swift
/// throw APIError.invalidCursor("before must be a positive 64-bit integer")
/// ```
public struct APIError: Error, Hashable, Sendable, CustomStringConvertible {
    public var status: HTTPStatus
    public var code: String
    public var message: String
    /// Extra response headers, e.g. `Allow` for 405.
    public var allow: String?
    /// The `WWW-Authenticate` challenge of a 401 (RFC 6750 §3).
    public var wwwAuthenticate: String?

    public init(_ status: HTTPStatus, code: String, message: String, allow: String? = nil,
                wwwAuthenticate: String? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.allow = allow
        self.wwwAuthenticate = wwwAuthenticate
    }

    public var description: String { "\(status.code) \(code): \(message)" }

    /// The contract's error body with this status.
    public func response(route: String?) -> HTTPResponse {
        var extra: HTTPHeaders = [:]
        if let allow { extra.add(name: "Allow", value: allow) }
        if let wwwAuthenticate { extra.add(name: "WWW-Authenticate", value: wwwAuthenticate) }
        return .error(status, code: code, message: message, headers: extra, route: route)
    }

    // MARK: - Request errors

    public static func notFound(_ path: some StringProtocol) -> APIError {
        APIError(.notFound, code: "not_found", message: "no resource at \(path)")
    }

    public static func methodNotAllowed(_ method: HTTPMethod, allow: [HTTPMethod]) -> APIError {
        let list = allow.map(\.rawValue).joined(separator: ", ")
        return APIError(.methodNotAllowed, code: "method_not_allowed",
                        message: "\(method.rawValue) is not allowed here; allowed: \(list)", allow: list)
    }

    public static func invalidJSON(_ error: JSONReadError) -> APIError {
        APIError(.badRequest, code: "invalid_json", message: "the body is not valid JSON: \(error)")
    }

    public static func invalidJSON(_ message: String) -> APIError {
        APIError(.badRequest, code: "invalid_json", message: message)
    }

    /// A field of a JSON body broke a rule: `invalid_<field>`.
    public static func invalidField(_ field: String, _ message: String) -> APIError {
        APIError(.badRequest, code: "invalid_\(field)", message: message)
    }

    public static func invalidCursor(_ message: String) -> APIError {
        APIError(.badRequest, code: "invalid_cursor", message: message)
    }

    public static func invalidLimit(_ message: String) -> APIError {
        APIError(.badRequest, code: "invalid_limit", message: message)
    }

    public static func conflictingCursors(_ message: String) -> APIError {
        APIError(.badRequest, code: "conflicting_cursors", message: message)
    }

    public static func invalidWindow(_ message: String) -> APIError {
        APIError(.badRequest, code: "invalid_window", message: message)
    }

    public static func invalidVersion(_ message: String) -> APIError {
        APIError(.badRequest, code: "invalid_version", message: message)
    }

    public static func invalidWait(_ message: String) -> APIError {
        APIError(.badRequest, code: "invalid_wait", message: message)
    }

    public static func invalidIDRange(_ message: String) -> APIError {
        APIError(.badRequest, code: "invalid_id_range", message: message)
    }

    public static func invalidMessageID(_ segment: String?) -> APIError {
        APIError(.badRequest, code: "invalid_message_id",
                 message: "the message id in the path must be a positive 64-bit integer" + (segment.map { ", not '\($0)'" } ?? ""))
    }

    /// A path conversation id that is not a valid id names no conversation.
    public static func conversationNotFound(_ segment: String?) -> APIError {
        APIError(.notFound, code: "conversation_not_found",
                 message: "no conversation " + (segment.map { "'\($0)'" } ?? "with that id"))
    }

    public static let shuttingDown = APIError(.serviceUnavailable, code: "shutting_down",
                                              message: "the server is shutting down")

    public static let storeUnavailable = APIError(.serviceUnavailable, code: "store_unavailable",
                                                  message: "the store does not answer")

    // MARK: - Store errors

    /// Maps every `StoreError` to its status and code.
    ///
    /// Storage details (SQLite codes and messages) never reach the client:
    /// they go to the log, the client reads "internal_error".
    public init(_ error: StoreError) {
        switch error {
        case .conversationNotFound(let id):
            self = APIError(.notFound, code: "conversation_not_found", message: "no conversation '\(id)'")
        case .messageNotFound(let conversation, let messageID):
            self = APIError(.notFound, code: "message_not_found",
                            message: "no message \(messageID) in conversation '\(conversation)'")
        case .conversationExists(let id):
            self = APIError(.conflict, code: "conversation_exists", message: "conversation '\(id)' already exists")
        case .clientIDConflict(let clientID):
            self = APIError(.conflict, code: "client_id_conflict",
                            message: "client_id '\(clientID)' was used before in this conversation with another sender or body")
        case .messageDeleted(let messageID):
            self = APIError(.conflict, code: "message_deleted", message: "message \(messageID) is deleted and cannot be edited")
        case .replyTargetNotFound(let messageID):
            self = APIError(.unprocessableContent, code: "reply_to_not_found",
                            message: "reply_to names no message of this conversation: \(messageID)")
        case .versionAhead(let requested, let current):
            self = APIError(.badRequest, code: "invalid_version",
                            message: "since (\(requested)) is greater than the conversation's version (\(current))")
        case .invalid(let field, let reason):
            self = .invalidField(Self.code(forField: field), "\(field) \(reason)")
        case .storage where error.isStorageFull:
            // RFC 4918 §11.5: the server cannot store what the request needs.
            // Not a bug of ours nor of the client's: retry once there is room.
            self = APIError(.insufficientStorage, code: "insufficient_storage",
                            message: "the server's storage is full; the request was not applied")
        case .storage:
            self = APIError(.internalServerError, code: "internal_error", message: "the store failed; the request was not applied")
        case .migration:
            self = APIError.storeUnavailable
        case .closed:
            self = APIError.shuttingDown
        }
    }

    /// The error code's suffix for a field the store names: body fields are
    /// their own (`invalid_sender`), query parameters share their family's.
    private static func code(forField field: String) -> String {
        switch field {
        case "id": "conversation_id"
        case "before", "after", "around": "cursor"
        case "since": "version"
        case "min_id", "max_id": "id_range"
        default: field
        }
    }
}
