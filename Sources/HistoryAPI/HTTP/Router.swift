import HTTPCore
import HistoryAccess

/// Maps (method, path pattern) to a handler, and answers what no route takes.
///
/// Patterns are literal segments and `{name}` parameters:
/// `/v1/conversations/{cid}/messages/{id}`. Each segment of the request
/// path is percent-decoded before it is compared or handed over, so
/// `/v1/conversations/gen%65ral` is conversation `general`.
///
/// Decisions:
/// - Paths match exactly: no trailing-slash tolerance and no empty segment
///   (`/v1/conversations/` and `//healthz` are 404 `not_found`), so every
///   resource has one spelling and caches and metrics see one name.
/// - A request is matched once (`match`), before the gates, and the match
///   is carried to the route: a refusal's label comes from it too.
/// - A path some route takes, with a method none of its routes take: 405
///   `method_not_allowed` with `Allow`.
/// - Every GET route answers HEAD too (the connection omits the body), and
///   `Allow` lists HEAD beside GET.
/// - A handler returns its `Answer`; a thrown `APIError` becomes its error
///   response here, so handlers only throw.
/// - A `POST`, `PUT` or `PATCH` body that is not declared JSON is 415
///   `unsupported_media_type` once the route is known (an unknown path is
///   still 404, a wrong method still 405), before the handler runs.
/// - Where a handler runs: every route may wait on the store unless
///   registered `.neverWaits`. Such a handler runs on the server's thread
///   that read the request when the server lets that thread block
///   (`RequestContext.whileBlockingAllowed`: no hand-off at all), else on
///   the `ReadPool`, its answer leaving from there through the request's
///   `AnswerOutlet`. The answers the router gives itself (404, 405, 415)
///   and `.neverWaits` routes are returned on the caller's thread. A
///   `.mayWait` route's `Shortcut` runs there first and may answer from
///   memory (a 304 from the kept versions) without blocking. Without a
///   pool (`Router()`), everything runs inline.
///
/// ```swift
/// var router = Router()
/// router.add(.get, "/healthz") { request in request.json(.ok, JSONWriter.healthy) }
/// ```
public struct Router: Sendable {
    public typealias Handler = @Sendable (APIRequest) throws(APIError) -> Answer
    /// Runs on the server's thread before a `.mayWait` handler: an answer
    /// it can give from memory alone (a 304 from the kept versions), or nil
    /// to send the request on. Never waits, never throws.
    public typealias Shortcut = @Sendable (APIRequest) -> Answer?

    /// Whether a handler may block its thread, which decides where it runs.
    public enum Cost: Sendable {
        /// It reads the store (or may): where the server allows blocking, else on the read pool.
        case mayWait
        /// Memory and CPU only, bounded and short (`/metrics`): inline.
        case neverWaits
    }

    /// The label of answers for paths no route takes (a bounded metric label).
    public static let unmatchedRoute = "unmatched"

    private struct Route: Sendable {
        var pattern: [Segment]
        var patternText: String
        var methods: [(method: HTTPMethod, label: String, cost: Cost, shortcut: Shortcut?, handler: Handler)]
    }

    private enum Segment: Sendable, Equatable {
        case literal(String)
        case parameter
    }

    private var routes: [Route] = []
    private let readPool: ReadPool?
    private let failures: StoreFailures

    /// `readPool` runs the handlers that may wait; nil runs them inline.
    /// `failures` logs and counts the store failures handlers meet.
    init(readPool: ReadPool? = nil, failures: StoreFailures = .silent) {
        self.readPool = readPool
        self.failures = failures
    }

    /// Registers `handler` for `method` on `pattern` (which starts with `/`),
    /// with the `shortcut` tried first, if any.
    public mutating func add(_ method: HTTPMethod, _ pattern: String, cost: Cost = .mayWait,
                             shortcut: Shortcut? = nil, handler: @escaping Handler) {
        let segments: [Segment] = pattern.split(separator: "/").map { part in
            part.hasPrefix("{") && part.hasSuffix("}") ? .parameter : .literal(String(part))
        }
        let label = "\(method.rawValue) \(pattern)"
        if let index = routes.firstIndex(where: { $0.pattern == segments }) {
            routes[index].methods.append((method, label, cost, shortcut, handler))
        } else {
            routes.append(Route(pattern: segments, patternText: pattern, methods: [(method, label, cost, shortcut, handler)]))
        }
    }

    /// Which route takes `request`, decided once: its handler, or only its
    /// path (405), or nothing (404); and the label its answers carry.
    func match(_ request: HTTPRequest) -> RouteMatch {
        guard let (index, parameters) = match(request.path) else {
            return RouteMatch(route: nil, method: nil, parameters: [], label: Self.unmatchedRoute)
        }
        let route = routes[index]
        var method = route.methods.firstIndex { $0.method == request.method }
        if method == nil && request.method == .head {
            // A HEAD answer is the GET answer without its body (RFC 9110 §9.3.2); the
            // connection leaves the body out and keeps its Content-Length.
            method = route.methods.firstIndex { $0.method == .get }
        }
        return RouteMatch(route: index, method: method, parameters: parameters,
                          label: method.map { route.methods[$0].label } ?? route.patternText)
    }

    /// Routes a request the gates let through. Its answer now (the
    /// router's own refusals, a `.neverWaits` route's answer, a handler
    /// run on this thread), or `.later`: then it leaves through `outlet`
    /// once the handler answered, on the read pool.
    func route(_ passage: Passage, outlet: AnswerOutlet) -> Answer {
        let request = passage.request
        let match = passage.route
        guard let index = match.route else {
            return .now(APIError.notFound(abbreviated(String(request.path), to: 200)).response(route: match.label))
        }
        guard let method = match.method else {
            let allowed = allowedMethods(of: routes[index])
            return .now(APIError.methodNotAllowed(request.method, allow: allowed).response(route: match.label))
        }
        guard BrowserSafety.acceptsBody(of: request) else {
            return .now(APIError.unsupportedMediaType.response(route: match.label))
        }
        let chosen = routes[index].methods[method]
        let apiRequest = APIRequest(http: request, context: passage.context, route: chosen.label,
                                    pathParameters: match.parameters, caller: passage.caller, outlet: outlet,
                                    failures: failures)
        guard chosen.cost == .mayWait, let readPool else {
            return Self.run(chosen.handler, for: apiRequest)
        }
        if let shortcut = chosen.shortcut, let answer = shortcut(apiRequest) { return answer }
        let handler = chosen.handler
        if let answer = passage.context.whileBlockingAllowed({ Self.run(handler, for: apiRequest) }) { return answer }
        readPool.submit {
            if case .now(let response) = Self.run(handler, for: apiRequest) {
                apiRequest.outlet.deliver(response)
            }
        }
        return .later
    }

    /// Routes `request` on its own, without gates, and hands its answer to
    /// `respond`, possibly later (tests of the router).
    func handle(_ request: HTTPRequest, context: any RequestContext, caller: Caller? = nil,
                respond: @escaping @Sendable (HTTPResponse) -> Void) {
        var passage = Passage(request: request, context: context, route: match(request))
        passage.caller = caller
        if case .now(let response) = route(passage, outlet: .bare(respond)) { respond(response) }
    }

    private static func run(_ handler: Handler, for request: APIRequest) -> Answer {
        do throws(APIError) {
            return try handler(request)
        } catch {
            return .now(error.response(route: request.route))
        }
    }

    /// Every route as `METHOD /pattern`, in the order added: the contract
    /// check (`ContractCoverageTests`) compares them with docs/API.md.
    var routeLabels: [String] {
        routes.flatMap { $0.methods.map(\.label) }
    }

    /// The methods the matched path takes (for a CORS preflight) and its
    /// pattern; nil when no route takes the path.
    func methods(of match: RouteMatch) -> (methods: [HTTPMethod], pattern: String)? {
        guard let index = match.route else { return nil }
        return (allowedMethods(of: routes[index]), routes[index].patternText)
    }

    /// The methods a path takes, for `Allow`: HEAD beside GET, in the
    /// order RFC 9110 lists methods, whatever order the routes were added in.
    private func allowedMethods(of route: Route) -> [HTTPMethod] {
        var methods = route.methods.map(\.method)
        if methods.contains(.get) && !methods.contains(.head) { methods.append(.head) }
        let order: [HTTPMethod] = [.get, .head, .post, .put, .patch, .delete, .options]
        var seen: Set<HTTPMethod> = []
        return methods.filter { seen.insert($0).inserted }.sorted {
            (order.firstIndex(of: $0) ?? order.count, $0.rawValue) < (order.firstIndex(of: $1) ?? order.count, $1.rawValue)
        }
    }

    /// Each segment is percent-decoded once (nil when malformed), then
    /// compared with the routes of as many segments.
    private func match(_ path: Substring) -> (Int, [String?])? {
        guard path.utf8.first == UInt8(ascii: "/") else { return nil }
        let raw = path[path.utf8.index(after: path.startIndex)...].pieces(separatedBy: UInt8(ascii: "/"), omittingEmpty: false)
        // A closure, not `\.isEmpty`: a key path is looked up at run time
        // (nearly 2% of a page's instructions in callgrind, its release included).
        guard !raw.contains(where: { $0.isEmpty }) else { return nil }
        let segments = raw.map { QueryParameters.percentDecoded($0, plusIsSpace: false) }
        // The literals first, the parameters gathered only for the route
        // that matched: gathering them for every candidate allocated an
        // array per route tried (callgrind, docs/performance.md).
        for (index, route) in routes.enumerated() where route.pattern.count == segments.count {
            let matches = zip(segments, route.pattern).allSatisfy { segment, pattern in
                if case .literal(let literal) = pattern { return segment == literal }
                return true
            }
            guard matches else { continue }
            var parameters: [String?] = []
            for (segment, pattern) in zip(segments, route.pattern) {
                if case .parameter = pattern { parameters.append(segment) }
            }
            return (index, parameters)
        }
        return nil
    }
}
