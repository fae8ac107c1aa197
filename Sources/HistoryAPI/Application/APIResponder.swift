import HTTPCore
import HistoryStore
import HistorySQLite

/// API v1 as the HTTP server sees it: the responder every request goes to,
/// and the observer every answer is reported to (metrics, access log).
///
/// Before routing, in this order, each step answering on its own when it
/// refuses:
/// 1. `Host` (421 `misdirected_request` on a loopback bind); then proxy
///    headers: refused in open mode (403, `ClientAddressing`), believed
///    from a trusted proxy, whose forwarded client then stands for the peer;
///    then the web viewer's files (`WebViewer`, when on), which need no token;
/// 2. a listed origin's CORS preflight (`OPTIONS`: 204, or 404 for a path
///    no route takes), which carries no token by design;
/// 3. authentication of `/v1` and `/metrics` (401): a request without a
///    valid token learns nothing, not even which paths exist, so an unknown
///    `/v1` path is 401 too, and 404/405 come only after it; a failure is
///    charged to the client address's read bucket, before any signature
///    check, and past its rate answered 429 instead;
/// 4. the router: 404, 405, 415, then the route, which asks
///    `AccessPolicy` (404 for a non-member, 403).
///
/// Between 3 and 4, the caller's rate limit (429 `rate_limited`): after
/// authentication, so it counts per token `sub`, and before any store work.
///
/// Steps 1 to 4's refusals run on the event loop; a route that may wait on
/// the store runs on `readPool` (`Router.Cost`) and answers from there, so
/// a slow read never holds up the loop's other connections.
///
/// ```swift
/// let api = APIResponder(store: store, metrics: Metrics(), logger: logger, accessLog: nil)
/// let server = HTTPServer(configuration: .init(port: 0), responder: api, observer: api)
/// ```
public final class APIResponder: HTTPResponder, HTTPServerObserver {
    private let router: Router
    private let metrics: Metrics
    private let accessLog: AccessLog?
    private let longPolls: LongPollRegistry
    private let access: AccessMode
    private let browser: BrowserSafety
    private let logger: Logger
    private let rateLimits: RequestRateLimits
    private let readPool: ReadPool
    private let webViewer: WebViewer?
    private let clients: ClientAddressing

    /// `readThreads`: the threads of the read pool, as many as the store
    /// has reader connections (`SQLiteStoreConfiguration.readerCount`).
    public init(store: any HistoryStore, metrics: Metrics, logger: Logger, accessLog: AccessLog?,
                access: AccessMode = .open, browser: BrowserSafety = .permissive, limits: ClientLimits = ClientLimits(),
                clients: ClientAddressing = .direct, readThreads: Int = 4, webViewer: WebViewer? = nil,
                feeds: FeedSettings = FeedSettings()) {
        let longPolls = LongPollRegistry(maximumPerClient: limits.maximumParkedPollsPerClient)
        let readPool = ReadPool(threads: readThreads)
        // Removals through other instances reach their parked polls here.
        store.observeUserChanges { [weak longPolls, weak readPool] users in
            guard let longPolls, let readPool else { return }
            longPolls.recheckMemberships(of: users, on: readPool)
        }
        let environment = RouteEnvironment(store: store, logger: logger, metrics: metrics, longPolls: longPolls,
                                           limits: limits, feeds: feeds, readPool: readPool)
        var router = Router(readPool: readPool)
        HealthRoutes(environment: environment).register(in: &router)
        ConversationRoutes(environment: environment).register(in: &router)
        MessageRoutes(environment: environment).register(in: &router)
        EventRoutes(environment: environment).register(in: &router)
        MetricsRoutes(environment: environment).register(in: &router)
        MemberRoutes(environment: environment).register(in: &router)
        InboxRoutes(environment: environment).register(in: &router)
        ServerFeedRoutes(environment: environment).register(in: &router)
        ReadMarkerRoutes(environment: environment).register(in: &router)
        TypingRoutes(environment: environment).register(in: &router)
        self.router = router
        self.access = access
        self.clients = clients
        self.browser = browser
        self.logger = logger
        self.metrics = metrics
        self.accessLog = accessLog
        self.longPolls = longPolls
        self.readPool = readPool
        self.webViewer = webViewer
        rateLimits = RequestRateLimits(limits)
    }

    /// The router's routes, `METHOD /pattern` (for the contract check).
    var routeLabels: [String] { router.routeLabels + (webViewer == nil ? [] : WebViewer.routeLabels) }

    public func handle(_ request: HTTPRequest, context: any RequestContext,
                       respond: @escaping @Sendable (HTTPResponse) -> Void) -> HTTPResponderResult {
        let slot = AnswerSlot(respond: respond)
        dispatch(request, context: context, respond: slot.send)
        return slot.handlerReturned()
    }

    public func errorResponse(for failure: HTTPFailure) -> HTTPResponse {
        APIError(failure).response(route: nil)
    }

    /// Host, CORS and the token first, each answering on its own; then the router.
    private func dispatch(_ request: HTTPRequest, context: any RequestContext,
                          respond: @escaping @Sendable (HTTPResponse) -> Void) {
        if let error = browser.hostError(request) {
            respond(error.response(route: router.label(for: request)))
            return
        }
        var respond = respond
        if clients.refusesForwardedRequests && ClientAddressing.isForwarded(request) {
            let error = ClientAddressing.forwardedInOpenMode
            metrics.recordDenied(status: error.status.code, code: error.code.rawValue)
            respond(error.response(route: router.label(for: request)))
            return
        }
        let forwarded = clients.forwardedClient(of: request, remoteAddress: context.remoteAddress)
        let context: any RequestContext = forwarded.map { ForwardedContext(connection: context, client: $0) } ?? context
        if let client = forwarded {
            let inner = respond
            let name = client.description
            respond = { response in
                var response = response
                response.client = name
                inner(response)
            }
        }
        if let webViewer, let response = webViewer.response(to: request) {
            respond(response)
            return
        }
        let listedOrigin = browser.listedOrigin(of: request)
        if browser.hasCORS && listedOrigin == nil {
            let inner = respond
            respond = { response in
                var response = response
                BrowserSafety.addVaryOrigin(to: &response)
                inner(response)
            }
        }
        if let origin = listedOrigin {
            let inner = respond
            respond = { response in
                var response = response
                BrowserSafety.addCORSHeaders(origin: origin, to: &response)
                inner(response)
            }
            if request.method == .options {
                preflight(request, respond: respond)
                return
            }
        }
        var caller: Caller?
        if AccessMode.needsCaller(path: Router.originFormPath(request.path)) {
            // Only a request that is charged needs its client's key (and
            // non-escaping closures cost no allocation on the usual path).
            let authentication = access.authenticate(
                request,
                charge: { rateLimits.chargeAuthentication(ClientKey.peer(context: context)) },
                refund: { rateLimits.refundAuthentication(ClientKey.peer(context: context)) })
            switch authentication {
            case .caller(let found):
                caller = found
            case .refused(let rejection, let charge):
                let error = APIError(rejection)
                if case .invalid(let reason) = rejection {
                    logger.debug("token refused on \(request.method) \(abbreviated(String(request.path), to: 200)): \(reason)")
                }
                metrics.recordDenied(status: error.status.code, code: error.code.rawValue)
                var response = error.response(route: router.label(for: request))
                if let charge { RequestRateLimits.addHeaders(charge, to: &response) }
                respond(response)
                return
            case .throttled(let decision):
                metrics.recordDenied(status: 429, code: ErrorCode.rateLimited.rawValue)
                respond(RequestRateLimits.refusal(decision, route: router.label(for: request)))
                return
            }
        }
        guard passesRateLimits(request, caller: caller, context: context, respond: &respond) else { return }
        router.handle(request, context: context, caller: caller, respond: respond)
    }

    /// Step 5: the caller's read or write rate (`RequestRateLimits`). False
    /// when refused (answered 429); otherwise the answer will carry the
    /// `RateLimit-*` headers.
    private func passesRateLimits(_ request: HTTPRequest, caller: Caller?, context: any RequestContext,
                                  respond: inout @Sendable (HTTPResponse) -> Void) -> Bool {
        let path = Router.originFormPath(request.path)
        guard let decision = rateLimits.check(request, path: path, caller: caller, context: context) else { return true }
        guard decision.allowed else {
            metrics.recordDenied(status: 429, code: ErrorCode.rateLimited.rawValue)
            respond(RequestRateLimits.refusal(decision, route: router.label(for: request)))
            return false
        }
        let inner = respond
        respond = { response in
            var response = response
            RequestRateLimits.addHeaders(decision, to: &response)
            inner(response)
        }
        return true
    }

    /// A listed origin's `OPTIONS`: the path's methods, the two request
    /// headers a client needs, and how long to cache the answer.
    private func preflight(_ request: HTTPRequest, respond: @escaping @Sendable (HTTPResponse) -> Void) {
        let path = Router.originFormPath(request.path)
        guard let (methods, pattern) = router.methods(forPath: path) else {
            respond(APIError.notFound(abbreviated(String(path), to: 200)).response(route: Router.unmatchedRoute))
            return
        }
        respond(BrowserSafety.preflight(methods: methods, route: "OPTIONS \(pattern)"))
    }

    public func exchangeCompleted(_ exchange: HTTPExchange) {
        metrics.record(exchange)
        accessLog?.record(exchange)
    }

    public func openConnectionsChanged(to count: Int) {
        metrics.setOpenConnections(count)
    }

    /// Answers every parked long-poll now, and every later one at once
    /// without parking, and ends every stream: the first step of a
    /// graceful shutdown.
    public func drainLongPolls() {
        longPolls.drain()
    }

    /// Long-polls parked now (the store counts its waits; this counts requests).
    public var parkedLongPollCount: Int { longPolls.count }

    /// How many times a woken long-poll read the store again since start.
    public var longPollRereadCount: Int { longPolls.rereadCount }

    /// Requests (and long-poll re-reads) waiting for a read-pool thread.
    public var readPoolQueuedCount: Int { readPool.queuedCount }

    /// Lets the read pool finish its queue and its threads exit: after the
    /// HTTP server stopped, before the store closes. Later work runs inline.
    public func stopReadPool() {
        readPool.stop()
    }
}
