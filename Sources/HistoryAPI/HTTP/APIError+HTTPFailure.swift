import HTTPCore

extension APIError {
    /// The contract's code and message for a failure the HTTP layer met
    /// before any route: the one place those codes are spelled.
    public init(_ failure: HTTPFailure) {
        switch failure {
        case .malformedRequest(let error):
            let code = switch error {
            case .unsupportedVersion: "http_version_not_supported"
            case .unsupportedTransferEncoding: "not_implemented"
            case .unsupportedExpectation: "expectation_failed"
            case .headTooLarge: "headers_too_large"
            case .bodyTooLarge: "payload_too_large"
            case .requestTimeout: "request_timeout"
            default: "bad_request"
            }
            self.init(error.status, code: code, message: error.description)
        case .tooManyConnections:
            self.init(.serviceUnavailable, code: "too_many_connections", message: "too many open connections; retry later")
        case .shuttingDown:
            self = .shuttingDown
        }
    }
}
