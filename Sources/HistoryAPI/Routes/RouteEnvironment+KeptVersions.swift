import HistoryAccess
import HistoryStore

extension RouteEnvironment {
    /// The conversation a conditional request names and its kept version
    /// (`HistoryStore.knownVersion`), when a 304 may be decided from them
    /// without blocking (`Router.Shortcut`); nil sends the request on to
    /// the store, which reads as before.
    ///
    /// Access is decided as a read decides it (`AccessPolicy`), from what
    /// the store keeps: nothing for an administrator (open mode, admin
    /// tokens), a kept role for a user (`HistoryStore.knownRole`, a
    /// member's, dropped by the writer before a membership change is
    /// answered). A user without a kept role, or refused, is read: the
    /// refusal is answered from the snapshot, as ever.
    func keptVersion(forConditional request: APIRequest,
                     _ action: AccessPolicy.Action) -> (conversation: ConversationID, version: Int64)? {
        guard request.hasIfNoneMatch else { return nil }
        return keptVersion(for: request, action)
    }

    /// The same for any request (a newest page answered from
    /// `NewestPageCache`, conditional or not).
    func keptVersion(for request: APIRequest,
                     _ action: AccessPolicy.Action) -> (conversation: ConversationID, version: Int64)? {
        guard let caller = request.caller,
              let conversation = try? conversationID(request),
              let version = store.knownVersion(of: conversation) else { return nil }
        if case .user(let user) = caller {
            guard let role = store.knownRole(of: user, in: conversation),
                  AccessPolicy.decide(action, caller: caller, role: role) == .allow else { return nil }
        }
        return (conversation, version)
    }
}
