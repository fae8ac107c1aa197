import HTTPCore
import HistoryAccess
import HistoryStore

/// API v1 as the HTTP server sees it: the responder every request goes to,
/// and the observer every answer is reported to (metrics, access log).
///
/// A request is matched to its route once (`Router.match`), then passes
/// the gates (`RequestGate`), in this order, each refusing on its own:
/// 1. `HostGate` (421 `misdirected_request` on a loopback bind); then
///    `ProxyGate`: proxy headers refused in open mode (403), believed from
///    a trusted proxy, whose forwarded client then stands for the peer;
///    then the web viewer's files (`WebViewerGate`, when on), which need no token;
/// 2. `CORSGate`, when origins are listed: a listed origin's preflight
///    (`OPTIONS`: 204, or 404 for a path no route takes), which carries no
///    token by design;
/// 3. `AuthenticationGate` of `/v1` and `/metrics` (401, or 429 for a
///    flood of bad tokens);
/// 4. `RateLimitGate`: the caller's rate (429 `rate_limited`), after
///    authentication, so it counts per token `sub`, and before any store work;
/// 5. the router: 404, 405, 415, then the route, which asks
///    `AccessPolicy` (404 for a non-member, 403).
///
/// Every answer leaves through the gates' decorations (CORS headers,
/// `RateLimit-*`, the forwarded client's name): a refusal and the router's
/// own answers and a read run on the server's thread at once, returned to
/// the connection; a route's answer from the read pool (`Router.Cost`,
/// past the server's blocking limit) through its `AnswerOutlet`, so a slow
/// read never holds up another connection.
///
/// ```swift
/// let api = APIResponder(store: store, metrics: Metrics(), logger: logger, accessLog: nil)
/// let server = HTTPServer(configuration: .init(port: 0), responder: api, observer: api)
/// ```
public final class APIResponder: HTTPResponder, HTTPServerObserver {
    private let router: Router
    private let gates: GateList
    private let metrics: Metrics
    private let accessLog: AccessLog?
    private let longPolls: LongPollRegistry
    private let readPool: ReadPool
    private let webViewer: WebViewer?
    private let membershipRecheck: MembershipRecheck

    /// `readThreads`: the threads of the read pool, as many as the store
    /// has reader connections (`SQLiteStoreConfiguration.readerCount`).
    /// `newestPageCacheBytes`: the newest pages kept as sent, at most, in
    /// all (`NewestPageCache`; 0 keeps none).
    public init(store: any HistoryStore, metrics: Metrics, logger: Logger, accessLog: AccessLog?,
                access: AccessMode = .open, browser: BrowserSafety = .permissive, limits: ClientLimits = ClientLimits(),
                clients: ClientAddressing = .direct, readThreads: Int = 4, webViewer: WebViewer? = nil,
                feeds: FeedSettings = FeedSettings(),
                newestPageCacheBytes: Int = APIResponder.defaultNewestPageCacheBytes) {
        let longPolls = LongPollRegistry(maximumPerClient: limits.maximumParkedPollsPerClient)
        let readPool = ReadPool(threads: readThreads)
        // Removals through other instances reach their parked polls here.
        // The store may outlive this responder, so it holds the pair
        // weakly, through an object of its own: a weak reference to the
        // read pool itself would give the pool a side table, and every
        // page's retain of it would take the slow path.
        let membershipRecheck = MembershipRecheck(longPolls: longPolls, readPool: readPool)
        store.observeUserChanges { [weak membershipRecheck] users in
            membershipRecheck?.run(users)
        }
        self.membershipRecheck = membershipRecheck
        let environment = RouteEnvironment(store: store, logger: logger, metrics: metrics, longPolls: longPolls,
                                           limits: limits, feeds: feeds, readPool: readPool,
                                           newestPages: NewestPageCache(capacityBytes: newestPageCacheBytes))
        var router = Router(readPool: readPool, failures: StoreFailures(logger: logger, metrics: metrics))
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
        let rateLimits = RequestRateLimits(limits)
        var gates: [any RequestGate] = [HostGate(browser: browser), ProxyGate(clients: clients, metrics: metrics)]
        if let webViewer { gates.append(WebViewerGate(viewer: webViewer)) }
        if browser.hasCORS { gates.append(CORSGate(browser: browser, router: router)) }
        gates.append(AuthenticationGate(access: access, rateLimits: rateLimits, metrics: metrics, logger: logger))
        gates.append(RateLimitGate(rateLimits: rateLimits, metrics: metrics))
        self.gates = GateList(gates)
        self.router = router
        self.metrics = metrics
        self.accessLog = accessLog
        self.longPolls = longPolls
        self.readPool = readPool
        self.webViewer = webViewer
    }

    /// The newest pages' cache by default: 16 MiB.
    public static let defaultNewestPageCacheBytes = NewestPageCache.defaultCapacityBytes

    /// The router's routes, `METHOD /pattern` (for the contract check).
    var routeLabels: [String] { router.routeLabels + (webViewer == nil ? [] : WebViewer.routeLabels) }

    /// The one entry (the gates, then the router) and the one exit (the
    /// gates' decorations) of every request.
    public func handle(_ request: HTTPRequest, context: any RequestContext,
                       respond: @escaping @Sendable (HTTPResponse) -> Void) -> HTTPResponderResult {
        var passage = Passage(request: request, context: context, route: router.match(request))
        var answer: HTTPResponse
        if let refusal = gates.admit(&passage) {
            answer = refusal
        } else {
            let outlet = AnswerOutlet(gates: gates, marks: passage.marks, respond: respond)
            guard case .now(let response) = router.route(passage, outlet: outlet) else { return .later }
            answer = response
        }
        gates.decorate(&answer, marks: passage.marks)
        return .response(answer)
    }

    public func errorResponse(for failure: HTTPFailure) -> HTTPResponse {
        APIError(failure).response(route: nil)
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

/// The parked polls to check again when other instances change users'
/// memberships (`HistoryStore.observeUserChanges`).
private final class MembershipRecheck: Sendable {
    let longPolls: LongPollRegistry
    let readPool: ReadPool

    init(longPolls: LongPollRegistry, readPool: ReadPool) {
        self.longPolls = longPolls
        self.readPool = readPool
    }

    func run(_ users: Set<UserID>?) {
        longPolls.recheckMemberships(of: users, on: readPool)
    }
}
