import HTTPCore
import HistoryStore

/// `GET /healthz`: 200 `{"status":"ok"}` when the store answers a read,
/// else 503 `store_unavailable`.
struct HealthRoutes {
    /// A lookup of a conversation that need not exist: "not found" is an
    /// answer, so it proves a reader connection works without a probe table.
    static let probe = ConversationID("healthz-probe")!

    let environment: RouteEnvironment

    func register(in router: inout Router) {
        router.add(.get, "/healthz") { request throws(APIError) in
            do throws(StoreError) {
                _ = try environment.store.conversation(Self.probe)
            } catch .conversationNotFound {
                // The store answered.
            } catch {
                environment.logger.warning("health check failed: \(error)")
                throw APIError.storeUnavailable
            }
            request.respond(.ok, json: JSONWriter.healthy)
        }
    }
}
