/// A response as the client read it.
public struct HTTPClientResponse: Sendable {
    public var status: Int
    public var reason: String
    public var version: HTTPVersion
    public var headers: HTTPHeaders
    public var body: [UInt8]

    public init(status: Int, reason: String, version: HTTPVersion = .http1_1, headers: HTTPHeaders = [:],
                body: [UInt8] = []) {
        self.status = status
        self.reason = reason
        self.version = version
        self.headers = headers
        self.body = body
    }

    /// The body decoded as UTF-8 (invalid bytes replaced), for tests and logs.
    public var bodyText: String { String(decoding: body, as: UTF8.self) }
}

/// Why the client could not send a request or read a response.
public enum HTTPClientError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The host is not an IP literal and no name lookup found it.
    case unknownHost(String)
    /// Nothing (or not enough) arrived within the connection's timeout.
    case timeout
    /// The peer closed the connection before a complete response.
    case connectionClosed
    /// Bytes that are not an HTTP/1.x response.
    case malformedResponse(String)
    case socket(SocketError)

    public var description: String {
        switch self {
        case .unknownHost(let host): "unknown host \(host)"
        case .timeout: "timed out"
        case .connectionClosed: "connection closed before a complete response"
        case .malformedResponse(let reason): "malformed response: \(reason)"
        case .socket(let error): error.description
        }
    }
}
