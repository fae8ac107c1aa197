import HistoryStore
import Synchronization

/// A conversation's feed long-polled with `typing=1`: the feed's events
/// as `ConversationFeedSource` reads them, plus who is typing, and a poll
/// that also answers when that list changes (docs/API.md, "Live").
///
/// `baseline` is the list when the poll arrived: a list that differs from
/// it is news. The wait is the store's version wait plus a typing
/// observation; a change of the list cancels the version wait, and the
/// cancellation reaches `LongPoll` as `.changed`, so it reads again (and
/// answers only if the list still differs). `LongPoll` itself knows
/// nothing of typing.
struct TypingFeedSource: PolledFeed {
    struct Snapshot: Sendable {
        let feed: ChangeFeed
        let typers: [UserID]
    }

    let events: ConversationFeedSource
    let baseline: [UserID]

    private var store: any HistoryStore { events.store }

    func read(after position: Int64) throws(StoreError) -> Snapshot {
        let feed = try events.read(after: position)
        return Snapshot(feed: feed, typers: store.typers(in: events.conversation))
    }

    func hasNews(_ snapshot: Snapshot) -> Bool {
        events.hasNews(snapshot.feed) || snapshot.typers != baseline
    }

    func position(of snapshot: Snapshot) -> Int64 { events.position(of: snapshot.feed) }

    func hasMore(_ snapshot: Snapshot) -> Bool { events.hasMore(snapshot.feed) }

    /// The feed's events: a stream follows typing through its own
    /// observation (`EventRoutes.followTyping`), not through this source.
    func streamEvents(_ snapshot: Snapshot) -> [ServerSentEvent] { events.streamEvents(snapshot.feed) }

    func nothing(after position: Int64) -> Snapshot {
        Snapshot(feed: events.nothing(after: position), typers: store.typers(in: events.conversation))
    }

    func wait(after position: Int64, timeout: Duration,
              handler: @escaping @Sendable (WaitOutcome) -> Void) -> WaitToken {
        let race = TypingWake()
        let store = self.store
        let baseline = self.baseline
        let observation = store.observeTyping(in: events.conversation) { typers in
            guard typers != baseline, let token = race.fire() else { return }
            store.cancelWait(token)
        }
        let token = events.wait(after: position, timeout: timeout) { outcome in
            store.stopObservingTyping(observation)
            handler(outcome == .cancelled && race.fired ? .changed : outcome)
        }
        if race.arm(token) {
            // The list changed before the token was known to the observer.
            store.cancelWait(token)
        } else if store.typers(in: events.conversation) != baseline, race.fire() != nil {
            // It changed before the observation began (the first read and
            // this wait are not one instant): not missed either.
            store.cancelWait(token)
        }
        return token
    }

    func json(_ snapshot: Snapshot, budget: Int) -> [UInt8] {
        JSONWriter.changeFeed(snapshot.feed, typing: snapshot.typers, budget: budget)
    }

    var membership: (user: UserID, conversation: ConversationID)? { events.membership }
}

/// The race between a typing change and the wait it must end: the change
/// may come before the wait's token is known.
private final class TypingWake: Sendable {
    private struct State {
        var token: WaitToken?
        var fired = false
    }

    private let state = Mutex(State())

    /// Marks the wake; the token to cancel when it is known (and this was the first wake).
    func fire() -> WaitToken? {
        state.withLock { state in
            guard !state.fired else { return nil }
            state.fired = true
            return state.token
        }
    }

    /// Records the wait's token; true when a wake came before it.
    func arm(_ token: WaitToken) -> Bool {
        state.withLock { state in
            state.token = token
            return state.fired
        }
    }

    var fired: Bool { state.withLock { $0.fired } }
}
