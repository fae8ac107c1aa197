import HTTPCore

/// One routed request as a handler sees it: the HTTP request, the decoded
/// path parameters of its route, and the one way to answer it.
///
/// A handler answers exactly once, at once or later (an append answers after
/// its group commit, a long-poll after a change); every answer carries the
/// route's label for metrics and the access log.
public struct APIRequest: Sendable {
    public let http: HTTPRequest
    public let context: any RequestContext
    /// The route that matched, e.g. `GET /v1/conversations/{cid}/messages`.
    public let route: String
    /// Percent-decoded values of the pattern's `{...}` segments, in order;
    /// nil for a segment whose percent-encoding is malformed.
    public let pathParameters: [String?]
    /// Who is asking, as authentication decided before routing; nil only on
    /// routes that need nobody (`/healthz`).
    public let caller: Caller?
    private let send: @Sendable (HTTPResponse) -> Void

    init(http: HTTPRequest, context: any RequestContext, route: String, pathParameters: [String?],
         caller: Caller?, send: @escaping @Sendable (HTTPResponse) -> Void) {
        self.http = http
        self.context = context
        self.route = route
        self.pathParameters = pathParameters
        self.caller = caller
        self.send = send
    }

    public var query: QueryParameters { QueryParameters(http.query) }

    /// Answers with a JSON body, gzip when the request accepts it and the
    /// body is 1 KiB or more (`ContentCoding`).
    public func respond(_ status: HTTPStatus, json body: [UInt8], headers: HTTPHeaders = [:]) {
        var response = HTTPResponse.json(status, body, route: route)
        for field in headers { response.headers.add(name: field.name, value: field.value) }
        ContentCoding.encode(&response, acceptsGzip: acceptsGzip)
        send(response)
    }

    /// Answers with any response; the route label is filled in.
    public func respond(_ response: HTTPResponse) {
        var response = response
        response.route = route
        send(response)
    }

    /// Answers with the contract's error body.
    public func fail(_ error: APIError) {
        send(error.response(route: route))
    }
}
