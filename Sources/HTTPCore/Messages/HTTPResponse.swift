/// A complete response. The connection adds `Content-Length`, `Date` and
/// `Connection` itself when it writes it, so a handler cannot get them wrong.
public struct HTTPResponse: Sendable {
    public var status: HTTPStatus
    public var headers: HTTPHeaders
    public var body: [UInt8]
    /// A low-cardinality name of what answered (`"GET /v1/conversations/{cid}/messages"`),
    /// for metrics and logs; never sent.
    public var route: String?
    /// The client's address when the responder knows it better than the
    /// socket does (behind a trusted proxy, the address the proxy forwarded
    /// for), for the access log; never sent. nil: the peer's address.
    public var client: String?
    /// A body written over time instead of `body` (Server-Sent Events): the
    /// head goes without `Content-Length`, and the connection closes when
    /// the stream finishes (`HTTPResponseStream`).
    public var stream: HTTPResponseStream?

    public init(status: HTTPStatus, headers: HTTPHeaders = [:], body: [UInt8] = [], route: String? = nil,
                stream: HTTPResponseStream? = nil) {
        self.status = status
        self.headers = headers
        self.body = body
        self.route = route
        self.stream = stream
    }

    /// A JSON response; `body` must already be UTF-8 JSON.
    public static func json(_ status: HTTPStatus, _ body: [UInt8], route: String? = nil) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": "application/json; charset=utf-8"],
                     body: body, route: route)
    }
}
