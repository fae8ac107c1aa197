import HTTPCore
import HistoryAccess
import HistoryStore

/// `GET /metrics`: the Prometheus text exposition; an admin's in tokens mode.
struct MetricsRoutes {
    static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    let environment: RouteEnvironment

    func register(in router: inout Router) {
        router.add(.get, "/metrics", cost: .neverWaits) { request throws(APIError) in
            try environment.authorize(request, .metrics)
            let body = environment.metrics.render(parkedLongPolls: environment.store.parkedWaitCount,
                                                  readPoolQueued: environment.readPool.queuedCount,
                                                  newestPageCache: environment.newestPages.statistics)
            return request.answer(HTTPResponse(status: .ok, headers: ["Content-Type": Self.contentType], body: body))
        }
    }
}
