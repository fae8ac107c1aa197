/// What a request was for: latencies and errors are reported per kind,
/// because a newest page, a deep page and a durable append cost differently.
enum RequestKind: Int, CaseIterable, Sendable {
    case newestPage
    case beforePage
    case afterPage
    /// `after` with `window`: the way back to the bottom after scrolling far.
    case windowPage
    case aroundPage
    case betweenPage
    case conversation
    case createConversation
    case post
    /// A post repeated with the same `client_id`, to check idempotency.
    case postRetry
    case edit
    case delete
    case events
    /// The read-back of acked posts at the end of a run.
    case readBack
    /// Not a request: a post's send time to an `events` answer carrying it.
    case delivery
    case other
    /// `get`: a fixed target of any HTTP server.
    case raw
    /// `GET /v1/users/{uid}/conversations`: one page of a user's inbox.
    case inboxPage
    /// `PUT .../members/{uid}/read`: a read marker moved (or asked to move back).
    case markRead
    /// `GET /v1/users/{uid}/events` with `wait`: the inbox feed's long-poll.
    case inboxEvents
    /// Not a request: a post's send time to an inbox feed answer carrying it.
    case inboxDelivery
    /// `PUT .../typing`.
    case typing

    var name: String {
        switch self {
        case .newestPage: "page newest"
        case .beforePage: "page before"
        case .afterPage: "page after"
        case .windowPage: "page after+window"
        case .aroundPage: "page around"
        case .betweenPage: "page between"
        case .conversation: "get conversation"
        case .createConversation: "create conversation"
        case .post: "post"
        case .postRetry: "post retry"
        case .edit: "edit"
        case .delete: "delete"
        case .events: "events (long-poll)"
        case .readBack: "read-back"
        case .delivery: "post-to-delivery"
        case .other: "other"
        case .raw: "get"
        case .inboxPage: "inbox page"
        case .markRead: "mark read"
        case .inboxEvents: "inbox events (long-poll)"
        case .inboxDelivery: "post-to-inbox-feed"
        case .typing: "typing"
        }
    }

    /// Kinds whose latency is the server's answer time; excluded from the
    /// request rate are the long-polls (parked on purpose) and deliveries.
    var isThroughputRequest: Bool {
        switch self {
        case .events, .delivery, .readBack, .inboxEvents, .inboxDelivery: false
        default: true
        }
    }
}
