import HistoryAccess
import HistoryStore

extension RouteEnvironment {
    /// The conversation a conditional request names and its kept version
    /// (`HistoryStore.knownVersion`), when a 304 may be decided from them
    /// on the event loop (`Router.Shortcut`); nil sends the request to the
    /// read pool, which reads as before.
    ///
    /// Only for an administrator (open mode, admin tokens): nothing about
    /// access is left to decide, and a conversation with a kept version
    /// exists. A user's membership is decided in a snapshot (docs/API.md,
    /// "Exact revocation"), so a user's request is always read.
    func keptVersion(forConditional request: APIRequest) -> (conversation: ConversationID, version: Int64)? {
        guard request.hasIfNoneMatch, case .admin? = request.caller,
              let segment = request.pathParameters.first ?? nil, let conversation = ConversationID(segment),
              let version = store.knownVersion(of: conversation) else { return nil }
        return (conversation, version)
    }
}
