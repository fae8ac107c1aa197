import HTTPCore
import HistoryStore

/// API v1 as the HTTP server sees it: the responder every request goes to,
/// and the observer every answer is reported to (metrics, access log).
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

    public init(store: any HistoryStore, metrics: Metrics, logger: Logger, accessLog: AccessLog?) {
        let longPolls = LongPollRegistry()
        let environment = RouteEnvironment(store: store, logger: logger, metrics: metrics, longPolls: longPolls)
        var router = Router()
        HealthRoutes(environment: environment).register(in: &router)
        ConversationRoutes(environment: environment).register(in: &router)
        MessageRoutes(environment: environment).register(in: &router)
        EventRoutes(environment: environment).register(in: &router)
        MetricsRoutes(environment: environment).register(in: &router)
        self.router = router
        self.metrics = metrics
        self.accessLog = accessLog
        self.longPolls = longPolls
    }

    public func handle(_ request: HTTPRequest, context: any RequestContext,
                       respond: @escaping @Sendable (HTTPResponse) -> Void) -> HTTPResponderResult {
        let slot = AnswerSlot(respond: respond)
        router.handle(request, context: context, respond: slot.send)
        return slot.handlerReturned()
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
    /// without parking: the first step of a graceful shutdown.
    public func drainLongPolls() {
        longPolls.drain()
    }

    /// Long-polls parked now (the store counts its waits; this counts requests).
    public var parkedLongPollCount: Int { longPolls.count }
}
