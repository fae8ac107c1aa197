/// An answer the HTTP layer gives by itself: for bytes that never became a
/// request a route could see, or for a connection the server will not
/// serve. The responder renders it (`HTTPResponder.errorResponse(for:)`),
/// so the error body's shape and codes live with the API, not here.
public enum HTTPFailure: Hashable, Sendable {
    /// The bytes could not become a request; the connection closes after the answer.
    case malformedRequest(RequestParseError)
    /// The server is at its connection limit.
    case tooManyConnections
    /// The server is shutting down and takes no new connection.
    case shuttingDown

    /// The status its answer carries.
    public var status: HTTPStatus {
        switch self {
        case .malformedRequest(let error): error.status
        case .tooManyConnections, .shuttingDown: .serviceUnavailable
        }
    }
}
