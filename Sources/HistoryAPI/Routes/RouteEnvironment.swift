import HTTPCore
import HistoryStore

/// What every route group needs: the store, the log, the metrics, and the
/// long-polls in flight; plus the path readings all of them share.
struct RouteEnvironment: Sendable {
    let store: any HistoryStore
    let logger: Logger
    let metrics: Metrics
    let longPolls: LongPollRegistry

    /// The `{cid}` of the path. An id that is not a valid conversation id
    /// names no conversation: 404 `conversation_not_found` (docs/API.md, "Validation").
    func conversationID(_ request: APIRequest, at index: Int = 0) throws(APIError) -> ConversationID {
        let segment = request.pathParameters[index]
        guard let segment, let id = ConversationID(segment) else {
            throw APIError.conversationNotFound(segment.map { abbreviated($0, to: 80) })
        }
        return id
    }

    /// The `{id}` of the path: a positive 64-bit integer or 400 `invalid_message_id`.
    func messageID(_ request: APIRequest, at index: Int = 1) throws(APIError) -> Int64 {
        let segment = request.pathParameters[index]
        guard let segment, let id = DecimalParser.positiveInt64(segment) else {
            throw APIError.invalidMessageID(segment.map { abbreviated($0, to: 40) })
        }
        return id
    }

    /// The HTTP answer to a store failure; storage details go to the log only.
    func apiError(_ error: StoreError, request: APIRequest) -> APIError {
        switch error {
        case .storage(let code, let message):
            logger.error("storage failure on \(request.http.method) \(request.http.target): SQLite \(code): \(message)")
        case .migration(let reason):
            logger.error("schema problem: \(reason)")
        default:
            break
        }
        return APIError(error)
    }

    /// Runs a synchronous store read, mapping its error.
    func read<T>(_ request: APIRequest, _ body: () throws(StoreError) -> T) throws(APIError) -> T {
        do {
            return try body()
        } catch {
            throw apiError(error, request: request)
        }
    }
}

extension MessageRules {
    /// `MessageRules` checks through the one `StoreError` → `APIError` mapping.
    static func check(_ rule: () throws(StoreError) -> Void) throws(APIError) {
        do {
            try rule()
        } catch {
            throw APIError(error)
        }
    }
}
