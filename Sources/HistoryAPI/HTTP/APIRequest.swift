import HTTPCore
import HistoryAccess
import HistoryStore

/// One routed request as a handler sees it: the HTTP request, the decoded
/// path parameters of its route, and the makers of its answer.
///
/// A handler returns its answer (`Answer`): `.now` with a response made
/// here (`json`, `answer`, `notModified`), or `.later` from `later`, whose
/// promise answers once the store's write commits or a long-poll wakes.
/// Every answer carries the route's label for metrics and the access log.
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
    /// Where a later answer leaves (`AnswerPromise`).
    let outlet: AnswerOutlet
    /// Where a store failure is logged and counted.
    let failures: StoreFailures

    init(http: HTTPRequest, context: any RequestContext, route: String, pathParameters: [String?],
         caller: Caller?, outlet: AnswerOutlet, failures: StoreFailures) {
        self.http = http
        self.context = context
        self.route = route
        self.pathParameters = pathParameters
        self.caller = caller
        self.outlet = outlet
        self.failures = failures
    }

    public var query: QueryParameters { QueryParameters(http.query) }

    /// A JSON response, gzip when the request accepts it and the body is
    /// 1 KiB or more (`ContentCoding`), under the route's label.
    public func jsonResponse(_ status: HTTPStatus, _ body: [UInt8], headers: HTTPHeaders = [:]) -> HTTPResponse {
        var response = HTTPResponse.json(status, body, route: route)
        for field in headers { response.headers.add(name: field.name, value: field.value) }
        ContentCoding.encode(&response, acceptsGzip: acceptsGzip)
        return response
    }

    /// Answers now with a JSON body (`jsonResponse`).
    public func json(_ status: HTTPStatus, _ body: [UInt8], headers: HTTPHeaders = [:]) -> Answer {
        .now(jsonResponse(status, body, headers: headers))
    }

    /// Answers now with any response; the route label is filled in.
    public func answer(_ response: HTTPResponse) -> Answer {
        var response = response
        response.route = route
        return .now(response)
    }

    /// Answers later: `start` hands the promise on to whatever will answer.
    public func later(_ start: (AnswerPromise) -> Void) -> Answer {
        start(AnswerPromise(request: self))
        return .later
    }

    /// The HTTP answer to a store failure (`StoreFailures`): the one mapping
    /// every route's reads and writes go through.
    public func apiError(_ error: StoreError) -> APIError {
        failures.apiError(error, method: http.method, target: http.target)
    }
}
