import HTTPCore
import HistoryStore

/// `GET /healthz`: 200 `{"status":"ok"}` when the store answers
/// (`HistoryStore.ping`: a read for SQLite, `SELECT 1` for PostgreSQL),
/// else 503 `store_unavailable`: while a PostgreSQL server is down, and
/// 200 again as soon as it is back, without a restart.
struct HealthRoutes {
    let environment: RouteEnvironment

    func register(in router: inout Router) {
        router.add(.get, "/healthz") { request throws(APIError) in
            do throws(StoreError) {
                try environment.store.ping()
            } catch {
                environment.logger.warning("health check failed: \(error)")
                throw APIError.storeUnavailable
            }
            return request.json(.ok, JSONWriter.healthy)
        }
    }
}
