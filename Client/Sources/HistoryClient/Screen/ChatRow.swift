/// One row of a chat screen, top to bottom: what a `List` or a collection
/// view draws, in the order ``ChatScreen/rows`` gives.
public enum ChatRow: Hashable, Sendable, Identifiable {
    /// Older messages exist: drawn at the top; when it comes into view the
    /// model loads the previous page.
    case loadingOlder
    /// The "new messages" divider, above the first unread message.
    case unreadDivider
    case message(HistoryMessage)
    /// A message sent from this screen that the server has not stored yet.
    case pending(PendingMessage)
    /// Newer messages exist below (the window is detached from the tail):
    /// when it comes into view the model loads the next page.
    case loadingNewer
    /// Who is typing now, below the last message.
    case typing([String])

    public var id: ChatRowID {
        switch self {
        case .loadingOlder: .loadingOlder
        case .unreadDivider: .unreadDivider
        case .message(let message): .message(message.id)
        case .pending(let pending): .pending(pending.clientID)
        case .loadingNewer: .loadingNewer
        case .typing: .typing
        }
    }
}

/// A row's identity, stable across edits: what the view reports back in a
/// ``ChatViewport`` and what a ``ChatScrollCommand`` names.
public enum ChatRowID: Hashable, Sendable {
    case loadingOlder
    case unreadDivider
    case message(Int64)
    case pending(String)
    case loadingNewer
    case typing
}

/// A send in progress or failed, shown as a row until the stored message
/// replaces it.
public struct PendingMessage: Hashable, Sendable {
    public enum State: Hashable, Sendable {
        /// On its way, or waiting to be retried after a transient failure.
        case sending
        /// Refused for good (or given up on): the row offers a retry, which
        /// sends again with the same `client_id`.
        case failed(reason: String)
    }

    /// The `client_id` every attempt carries, so the server stores it once.
    public let clientID: String
    public let body: String
    public let replyTo: Int64?
    public internal(set) var state: State
    /// Attempts made so far.
    public internal(set) var attempts: Int

    public init(clientID: String, body: String, replyTo: Int64? = nil) {
        self.clientID = clientID
        self.body = body
        self.replyTo = replyTo
        self.state = .sending
        self.attempts = 0
    }
}
