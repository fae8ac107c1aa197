import HTTPCore

extension APIError {
    /// The contract's code and message for a failure the HTTP layer met
    /// before any route: the one place those codes are spelled.
    public init(_ failure: HTTPFailure) {
        switch failure {
        case .malformedRequest(let error):
            let code: ErrorCode = switch error {
            case .unsupportedVersion: .httpVersionNotSupported
            case .unsupportedTransferEncoding: .notImplemented
            case .unsupportedExpectation: .expectationFailed
            case .headTooLarge: .headersTooLarge
            case .bodyTooLarge: .payloadTooLarge
            case .requestTimeout: .requestTimeout
            default: .badRequest
            }
            self.init(code, error.description)
        case .tooManyConnections:
            self.init(.tooManyConnections, "too many open connections; retry later")
        case .shuttingDown:
            self = .shuttingDown
        }
    }
}
