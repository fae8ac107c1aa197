import HTTPCore
import HistoryStore

/// What a store failure leaves behind besides its answer (`APIError(StoreError)`):
/// storage details in the log, never for the client; refusals counted.
struct StoreFailures: Sendable {
    let logger: Logger
    let metrics: Metrics?

    /// Logs nothing, counts nothing (a router on its own, in tests).
    static let silent = StoreFailures(logger: Logger(level: .error) { _ in }, metrics: nil)

    func apiError(_ error: StoreError, method: HTTPMethod, target: String) -> APIError {
        switch error {
        case .storage(let failure):
            logger.error("storage failure on \(method) \(target): \(failure)")
        case .invalidSetting(let name, let reason):
            logger.error("store misused on \(method) \(target): \(name) \(reason)")
        case .migration(let reason):
            logger.error("schema problem: \(reason)")
        case .unavailable(let message):
            logger.warning("store unavailable on \(method) \(target): \(message)")
        case .refused:
            let refusal = APIError(error)
            metrics?.recordDenied(status: refusal.status.code, code: refusal.code.rawValue)
        default:
            break
        }
        return APIError(error)
    }
}
