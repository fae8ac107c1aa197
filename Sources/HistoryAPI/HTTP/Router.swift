import HTTPCore

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
/// - A path some route takes, with a method none of its routes take: 405
///   `method_not_allowed` with `Allow`.
/// - Every GET route answers HEAD too (the connection omits the body), and
///   `Allow` lists HEAD beside GET.
/// - A handler's thrown `APIError` becomes its error response here, so
///   handlers only throw.
/// - A `POST`, `PUT` or `PATCH` body that is not declared JSON is 415
///   `unsupported_media_type` once the route is known (an unknown path is
///   still 404, a wrong method still 405), before the handler runs.
/// - Where a handler runs: every route may wait on the store unless
///   registered `.neverWaits`, so it runs on the `ReadPool` and answers
///   through `respond` from there; the answers the router gives itself
///   (404, 405, 415) and `.neverWaits` routes stay on the caller's thread,
///   the event loop. Without a pool (`Router()`), everything runs inline.
///
/// ```swift
/// var router = Router()
/// router.add(.get, "/healthz") { request in request.respond(.ok, json: JSONWriter.healthy) }
/// ```
public struct Router: Sendable {
    public typealias Handler = @Sendable (APIRequest) throws(APIError) -> Void

    /// Whether a handler may block its thread, which decides where it runs.
    public enum Cost: Sendable {
        /// It reads the store (or may): on the read pool, off the event loop.
        case mayWait
        /// Memory and CPU only, bounded and short (`/metrics`): inline.
        case neverWaits
    }

    /// The label of answers for paths no route takes (a bounded metric label).
    public static let unmatchedRoute = "unmatched"

    private struct Route: Sendable {
        var pattern: [Segment]
        var patternText: String
        var methods: [(method: HTTPMethod, label: String, cost: Cost, handler: Handler)]
    }

    private enum Segment: Sendable, Equatable {
        case literal(String)
        case parameter
    }

    private var routes: [Route] = []
    private let readPool: ReadPool?

    /// `readPool` runs the handlers that may wait; nil runs them inline.
    public init(readPool: ReadPool? = nil) {
        self.readPool = readPool
    }

    /// Registers `handler` for `method` on `pattern` (which starts with `/`).
    public mutating func add(_ method: HTTPMethod, _ pattern: String, cost: Cost = .mayWait,
                             handler: @escaping Handler) {
        let segments: [Segment] = pattern.split(separator: "/").map { part in
            part.hasPrefix("{") && part.hasSuffix("}") ? .parameter : .literal(String(part))
        }
        let label = "\(method.rawValue) \(pattern)"
        if let index = routes.firstIndex(where: { $0.pattern == segments }) {
            routes[index].methods.append((method, label, cost, handler))
        } else {
            routes.append(Route(pattern: segments, patternText: pattern, methods: [(method, label, cost, handler)]))
        }
    }

    /// Routes `request` and calls `respond` exactly once (possibly later).
    /// `caller` is who authentication found (nil where none was asked for).
    public func handle(_ request: HTTPRequest, context: any RequestContext, caller: Caller? = nil,
                       respond: @escaping @Sendable (HTTPResponse) -> Void) {
        let path = Self.originFormPath(request.path)
        guard let (route, parameters) = match(path) else {
            respond(APIError.notFound(abbreviated(String(path), to: 200)).response(route: Self.unmatchedRoute))
            return
        }
        var chosen = route.methods.first { $0.method == request.method }
        if chosen == nil && request.method == .head {
            // A HEAD answer is the GET answer without its body (RFC 9110 §9.3.2); the
            // connection leaves the body out and keeps its Content-Length.
            chosen = route.methods.first { $0.method == .get }
        }
        guard let chosen else {
            let allowed = allowedMethods(of: route)
            respond(APIError.methodNotAllowed(request.method, allow: allowed).response(route: route.patternText))
            return
        }
        guard BrowserSafety.acceptsBody(of: request) else {
            respond(APIError.unsupportedMediaType.response(route: chosen.label))
            return
        }
        let apiRequest = APIRequest(http: request, context: context, route: chosen.label,
                                    pathParameters: parameters, caller: caller, send: respond)
        let handler = chosen.handler
        let run: @Sendable () -> Void = {
            do throws(APIError) {
                try handler(apiRequest)
            } catch {
                apiRequest.fail(error)
            }
        }
        if chosen.cost == .mayWait, let readPool {
            readPool.submit(run)
        } else {
            run()
        }
    }

    /// Every route as `METHOD /pattern`, in the order added: the contract
    /// check (`ContractCoverageTests`) compares them with docs/API.md.
    var routeLabels: [String] {
        routes.flatMap { $0.methods.map(\.label) }
    }

    /// The methods `path` takes (for a CORS preflight) and its pattern;
    /// nil when no route takes the path.
    func methods(forPath path: Substring) -> (methods: [HTTPMethod], pattern: String)? {
        guard let (route, _) = match(Self.originFormPath(path)) else { return nil }
        return (allowedMethods(of: route), route.patternText)
    }

    /// The metrics label `request` would be answered under: its route's,
    /// the path pattern's when no method matches, else `unmatched`.
    func label(for request: HTTPRequest) -> String {
        guard let (route, _) = match(Self.originFormPath(request.path)) else { return Self.unmatchedRoute }
        let method = request.method == .head && !route.methods.contains { $0.method == .head } ? HTTPMethod.get : request.method
        return route.methods.first { $0.method == method }?.label ?? route.patternText
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
    private func match(_ path: Substring) -> (Route, [String?])? {
        guard path.utf8.first == UInt8(ascii: "/") else { return nil }
        let raw = path[path.utf8.index(after: path.startIndex)...].pieces(separatedBy: UInt8(ascii: "/"), omittingEmpty: false)
        guard !raw.contains(where: \.isEmpty) else { return nil }
        let segments = raw.map { QueryParameters.percentDecoded($0, plusIsSpace: false) }
        for route in routes where route.pattern.count == segments.count {
            var parameters: [String?] = []
            var matches = true
            for (segment, pattern) in zip(segments, route.pattern) {
                switch pattern {
                case .literal(let literal):
                    matches = segment == literal
                case .parameter:
                    parameters.append(segment)
                }
                if !matches { break }
            }
            if matches { return (route, parameters) }
        }
        return nil
    }

    /// `http://host:port/path` (absolute-form, RFC 9112 §3.2.2) becomes `/path`.
    static func originFormPath(_ path: Substring) -> Substring {
        guard path.utf8.first != UInt8(ascii: "/") else { return path }
        for scheme in ["http://", "https://"] where path.count > scheme.count && path.lowercased().hasPrefix(scheme) {
            let afterScheme = path.dropFirst(scheme.count)
            return afterScheme.firstIndex(of: "/").map { afterScheme[$0...] } ?? "/"
        }
        return path
    }
}
