import HistoryAccess
import HistoryStore

/// What a `LongPoll` or an `EventStream` reads and waits on: a
/// conversation's change feed (`ConversationFeedSource`), a user's inbox
/// feed (`InboxFeedSource`) or the backend feed of every change
/// (`ServerFeedSource`). A type that conforms can be long-polled and
/// streamed alike.
///
/// Both are read after a position (a conversation's version, the server's
/// activity) and answer a snapshot that either tells the client something
/// (events, or more to fetch) or carries the position to wait after.
protocol PolledFeed: Sendable {
    associatedtype Snapshot: Sendable

    /// The feed after `position`.
    func read(after position: Int64) throws(StoreError) -> Snapshot

    /// True when `snapshot` is worth answering: events, more to fetch, or a reset.
    func hasNews(_ snapshot: Snapshot) -> Bool

    /// True when more changes than `snapshot` holds are waiting (`has_more`):
    /// a stream reads again at once instead of parking.
    func hasMore(_ snapshot: Snapshot) -> Bool

    /// Where the next read starts after `snapshot`: its `version` or
    /// `activity` (the last event's when `hasMore`, else the current one).
    func position(of snapshot: Snapshot) -> Int64

    /// `snapshot` as a stream's events, in cursor order: each event with
    /// its cursor as `id`, its `type`, and the object the long-poll's
    /// `events` array holds as `data`; a reset is one `reset` event whose
    /// `data` is the whole reset answer and whose `id` is its position.
    func streamEvents(_ snapshot: Snapshot) -> [ServerSentEvent]

    /// The answer when the store can no longer read: nothing after
    /// `position`, which is always a valid next `since`.
    func nothing(after position: Int64) -> Snapshot

    /// Parks in the store until a commit after `position` may concern this
    /// feed (no thread waits); `handler` runs exactly once.
    func wait(after position: Int64, timeout: Duration,
              handler: @escaping @Sendable (WaitOutcome) -> Void) -> WaitToken

    /// The answer's body within `budget` bytes.
    func json(_ snapshot: Snapshot, budget: Int) -> [UInt8]

    /// The membership the feed is read through: removing that user from
    /// that conversation answers the poll 404. Nil when no removal ends it
    /// (an admin's poll; a user's inbox, where a removal is news).
    var membership: (user: UserID, conversation: ConversationID)? { get }
}

/// `GET /v1/conversations/{cid}/events`: positions are the conversation's versions.
struct ConversationFeedSource: PolledFeed {
    let store: any HistoryStore
    let conversation: ConversationID
    let query: ChangeQuery
    let caller: Caller
    /// Decided again at every read, in the read's own snapshot: a poll woken
    /// by a commit after its user's removal reads nothing of it.
    let access: AccessCheck

    func read(after position: Int64) throws(StoreError) -> ChangeFeed {
        var query = query
        query.since = position
        return try store.changes(in: conversation, query, access: access)
    }

    func hasNews(_ feed: ChangeFeed) -> Bool { !feed.events.isEmpty || feed.hasMore || feed.reset }

    func hasMore(_ feed: ChangeFeed) -> Bool { feed.hasMore }

    func position(of feed: ChangeFeed) -> Int64 { feed.version }

    func streamEvents(_ feed: ChangeFeed) -> [ServerSentEvent] {
        if feed.reset { return [ServerSentEvent(id: feed.version, type: "reset", data: JSONWriter.changeFeed(feed))] }
        return feed.events.map { event in
            ServerSentEvent(id: event.version, type: event.kind.rawValue, data: JSONWriter.changeEvent(event))
        }
    }

    func nothing(after position: Int64) -> ChangeFeed { ChangeFeed(events: [], hasMore: false, version: position) }

    func wait(after position: Int64, timeout: Duration,
              handler: @escaping @Sendable (WaitOutcome) -> Void) -> WaitToken {
        store.waitForChange(in: conversation, after: position, ids: idRange, timeout: timeout, handler: handler)
    }

    func json(_ feed: ChangeFeed, budget: Int) -> [UInt8] { JSONWriter.changeFeed(feed, budget: budget) }

    var membership: (user: UserID, conversation: ConversationID)? {
        if case .user(let user) = caller { (user, conversation) } else { nil }
    }

    /// The poll's `min_id`/`max_id` as the store's wake filter: a commit
    /// that changed no message in it cannot add an event, so it does not
    /// wake the poll (no read, no re-park).
    private var idRange: ClosedRange<Int64>? {
        guard query.minID != nil || query.maxID != nil else { return nil }
        return (query.minID ?? 1)...(query.maxID ?? Int64.max)
    }
}

/// `GET /v1/users/{uid}/events`: positions are the server's activity. The
/// store wakes it for commits touching the user's conversations, markers
/// or memberships only.
struct InboxFeedSource: PolledFeed {
    let store: any HistoryStore
    let user: UserID
    let query: InboxChangeQuery

    func read(after position: Int64) throws(StoreError) -> InboxChangeFeed {
        var query = query
        query.since = position
        return try store.inboxChanges(of: user, query)
    }

    func hasNews(_ feed: InboxChangeFeed) -> Bool { !feed.events.isEmpty || feed.hasMore || feed.reset }

    func hasMore(_ feed: InboxChangeFeed) -> Bool { feed.hasMore }

    func position(of feed: InboxChangeFeed) -> Int64 { feed.activity }

    func streamEvents(_ feed: InboxChangeFeed) -> [ServerSentEvent] {
        if feed.reset { return [ServerSentEvent(id: feed.activity, type: "reset", data: JSONWriter.inboxFeed(feed))] }
        return feed.events.map { event in
            let type = switch event {
            case .updated: "updated"
            case .removed: "removed"
            }
            return ServerSentEvent(id: event.activity, type: type, data: JSONWriter.inboxEvent(event))
        }
    }

    func nothing(after position: Int64) -> InboxChangeFeed { InboxChangeFeed(events: [], hasMore: false, activity: position) }

    func wait(after position: Int64, timeout: Duration,
              handler: @escaping @Sendable (WaitOutcome) -> Void) -> WaitToken {
        store.waitForInboxChange(of: user, after: position, timeout: timeout, handler: handler)
    }

    func json(_ feed: InboxChangeFeed, budget: Int) -> [UInt8] { JSONWriter.inboxFeed(feed, budget: budget) }

    /// An inbox is always its own user's, and a membership that ends is
    /// one of the changes it reports (`removed`): nothing revokes it.
    var membership: (user: UserID, conversation: ConversationID)? { nil }
}

/// `GET /v1/events`: positions are the server's activity, and every commit
/// that takes one wakes it, whatever it changed. Administrators only, so
/// no removal ends it.
struct ServerFeedSource: PolledFeed {
    let store: any HistoryStore
    let query: ServerChangeQuery

    func read(after position: Int64) throws(StoreError) -> ServerChangeFeed {
        var query = query
        query.since = position
        return try store.serverChanges(query)
    }

    func hasNews(_ feed: ServerChangeFeed) -> Bool { !feed.events.isEmpty || feed.hasMore }

    func hasMore(_ feed: ServerChangeFeed) -> Bool { feed.hasMore }

    func position(of feed: ServerChangeFeed) -> Int64 { feed.activity }

    /// No reset: a backend needs every change, however far behind it is.
    func streamEvents(_ feed: ServerChangeFeed) -> [ServerSentEvent] {
        feed.events.map { event in
            ServerSentEvent(id: event.activity, type: event.kind.name, data: JSONWriter.serverEvent(event))
        }
    }

    func nothing(after position: Int64) -> ServerChangeFeed { ServerChangeFeed(events: [], hasMore: false, activity: position) }

    func wait(after position: Int64, timeout: Duration,
              handler: @escaping @Sendable (WaitOutcome) -> Void) -> WaitToken {
        store.waitForServerChange(after: position, timeout: timeout, handler: handler)
    }

    func json(_ feed: ServerChangeFeed, budget: Int) -> [UInt8] { JSONWriter.serverFeed(feed, budget: budget) }

    var membership: (user: UserID, conversation: ConversationID)? { nil }
}
