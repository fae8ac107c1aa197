import Dispatch
import Synchronization

/// The store's parked long-polls, without a thread per wait: each waits for
/// a `WaitInterest`, and the backend publishes each commit to them as
/// `CommittedChange`s once readers can see it.
///
/// A wait is an entry (its handler and a dispatch timer for its timeout)
/// plus a place in the index of its kind (`CounterWaitIndex` by
/// conversation and for the server, `InboxWaitIndex` by user and by
/// conversation), so ten thousand parked waits cost memory, not threads,
/// and a commit looks only at the waits on what it changed. A wait
/// registers *before* it looks at the store, so a commit between the two
/// cannot be missed: either the publication finds the entry, or the look
/// finds the commit. Handlers run on a concurrent delivery queue, never on
/// the caller's thread nor the publisher's, and each exactly once.
package final class Waiters: Sendable {
    /// Past this many conversations, a user's inbox wait is woken by every
    /// commit rather than registered under each of them.
    package static let membershipCap = InboxWaitIndex.membershipCap

    private struct Entry {
        let interest: WaitInterest
        let handler: @Sendable (WaitOutcome) -> Void
        let timer: TimerBox
    }

    /// The server feed's one key: it waits on the whole server's activity.
    private struct Server: Hashable {}

    private struct State {
        var nextToken: UInt64 = 1
        var entries: [UInt64: Entry] = [:]
        var versions = CounterWaitIndex<String>()
        var inboxes: InboxWaitIndex
        var server = CounterWaitIndex<Server>()
        var isClosed = false

        mutating func remove(_ token: UInt64) -> Entry? {
            guard let entry = entries.removeValue(forKey: token) else { return nil }
            switch entry.interest {
            case .conversation(let conversation, _, _): versions.remove(token, key: conversation.rawValue)
            case .inbox: inboxes.remove(token)
            case .server: server.remove(token, key: Server())
            }
            return entry
        }

        /// Every entry, out of every index: what `wakeAll` and `close` answer.
        mutating func removeAll() -> [Entry] {
            let all = Array(entries.values)
            entries.removeAll()
            versions.removeAll()
            inboxes.removeAll()
            server.removeAll()
            return all
        }
    }

    private let state: Mutex<State>
    private let userObservers = Mutex<[@Sendable (Set<UserID>?) -> Void]>([])
    private let delivery = DispatchQueue(label: "history-store.waiters", attributes: .concurrent)

    /// `publishedActivity`: the activity every commit so far is at or
    /// below, given by a store that then publishes each commit with its
    /// activity once readers can see it; nil (the default): the store
    /// promises nothing, and every inbox wait looks at the feed once parked.
    package init(publishedActivity: Int64? = nil) {
        state = Mutex(State(inboxes: InboxWaitIndex(publishedActivity: publishedActivity)))
    }

    // MARK: - Parking

    /// Parks a wait for `interest`; `lookups` reads what the publications
    /// so far cannot tell (called only then, after the wait is registered).
    package func wait(for interest: WaitInterest, timeout: Duration, lookups: some WaitLookups,
                      handler: @escaping @Sendable (WaitOutcome) -> Void) -> WaitToken {
        switch interest {
        case .conversation(let conversation, let after, let ids):
            let key = conversation.rawValue
            return park(interest, timeout: timeout, handler: handler) { state, token in
                state.versions.insert(token, key: key, after: after, ids: ids)
            } settle: { token, known in
                if let known { return known > after }
                guard let current = lookups.version(of: conversation) else { return false }
                return state.withLock { state in
                    // Learnt only while parked: a publication keeps it from then on.
                    state.entries[token] != nil && state.versions.learn(current, key: key) > after
                }
            }
        case .server(let after):
            return park(interest, timeout: timeout, handler: handler) { state, token in
                state.server.insert(token, key: Server(), after: after, ids: nil)
            } settle: { _, known in
                if let known, known > after { return true }
                return lookups.activity().map { $0 > after } ?? false
            }
        case .inbox(let user, let after):
            let key = user.rawValue
            return park(interest, timeout: timeout, handler: handler) { state, token in
                state.inboxes.insert(token, user: key, after: after)
            } settle: { token, admission in
                var seqs = admission.known
                if seqs == nil {
                    seqs = lookups.membershipSeqs(of: user, limit: Self.membershipCap + 1)
                        .map { $0.count <= Self.membershipCap ? .conversations($0) : .tooMany }
                }
                state.withLock { state in
                    if admission.known == nil { state.inboxes.finishLoading(key, with: seqs) }
                    state.inboxes.register(token, conversations: seqs, cached: admission.known != nil)
                }
                return admission.mustLook && lookups.hasInboxChanges(of: user, after: after) == true
            }
        }
    }

    /// The parking every kind shares: the entry and its index `admit` it
    /// under one lock, the timer is armed once both are in place (a zero
    /// timeout then finds them), then `settle` tells from what `admit`
    /// returned, and the reads it makes, whether the wait is satisfied
    /// already. A closed table answers `.closing` at once.
    private func park<Admission: Sendable>(_ interest: WaitInterest, timeout: Duration,
                                 handler: @escaping @Sendable (WaitOutcome) -> Void,
                                 admit: (inout State, UInt64) -> Admission,
                                 settle: (UInt64, Admission) -> Bool) -> WaitToken {
        let timer = TimerBox(queue: delivery)
        let parked: (token: UInt64, admission: Admission)? = state.withLock { state in
            guard !state.isClosed else { return nil }
            let token = state.nextToken
            state.nextToken += 1
            state.entries[token] = Entry(interest: interest, handler: handler, timer: timer)
            return (token, admit(&state, token))
        }
        guard let parked else {
            timer.cancel()
            delivery.async { handler(.closing) }
            return WaitToken(rawValue: 0)
        }
        let token = parked.token
        timer.arm(after: timeout) { [weak self] in self?.finish(token, with: .timedOut) }
        if settle(token, parked.admission) { finish(token, with: .changed) }
        return WaitToken(rawValue: token)
    }

    // MARK: - Publishing

    /// Called after a commit is visible to readers, with what it changed:
    /// tells the user observers the users it named, then wakes the waits it
    /// satisfies (looking only at those indexed under what it changed).
    /// The observers first, so that a removal's revocation (through
    /// `observeUserChanges`) goes out before its commit's wake-ups.
    package func publish(_ changes: [CommittedChange]) {
        var users = Set<String>()
        let woken: [Entry] = state.withLock { state in
            var tokens: [UInt64] = []
            for change in changes {
                switch change {
                case .version(let conversation, let version, let changed):
                    tokens += state.versions.woken(by: version, key: conversation.rawValue, changed: changed)
                case .activity(let activity, let conversations, let changedUsers):
                    users.formUnion(changedUsers)
                    tokens += state.inboxes.woken(byActivity: activity, conversations: conversations, users: changedUsers)
                    tokens += state.server.woken(by: activity, key: Server())
                }
            }
            // Out of the indexes already: only their entries are left.
            return tokens.compactMap { state.entries.removeValue(forKey: $0) }
        }
        if !users.isEmpty { tellObservers(Set(users.compactMap { UserID($0) })) }
        for entry in woken { deliver(.changed, to: entry) }
    }

    /// Wakes every parked wait with `.changed` and forgets everything
    /// learnt from commits: for a store that may have missed some (a
    /// PostgreSQL instance whose listening connection was lost, so notices
    /// of other instances' commits went by unheard). Each woken caller
    /// reads again and parks again with what it read, which is current: a
    /// spurious wake costs one read, a missed one a whole timeout.
    package func wakeAll() {
        let woken = state.withLock { $0.removeAll() }
        tellObservers(nil)
        for entry in woken { deliver(.changed, to: entry) }
    }

    /// `handler` is told the users of every later publication that names
    /// some, and nil at `wakeAll` (see `HistoryStore.observeUserChanges`).
    package func observeUserChanges(_ handler: @escaping @Sendable (Set<UserID>?) -> Void) {
        userObservers.withLock { $0.append(handler) }
    }

    // MARK: - Ending

    /// Ends a wait with `.cancelled` unless it already ended.
    package func cancel(_ token: WaitToken) {
        finish(token.rawValue, with: .cancelled)
    }

    package var parkedCount: Int {
        state.withLock { $0.entries.count }
    }

    /// Answers every parked wait `.closing` (and every later one at once),
    /// and returns once those handlers have run.
    package func close() {
        let all: [Entry] = state.withLock { state in
            state.isClosed = true
            return state.removeAll()
        }
        for entry in all { deliver(.closing, to: entry) }
        delivery.sync(flags: .barrier) {}
    }

    // MARK: - Private

    private func finish(_ token: UInt64, with outcome: WaitOutcome) {
        if let entry = state.withLock({ $0.remove(token) }) { deliver(outcome, to: entry) }
    }

    private func deliver(_ outcome: WaitOutcome, to entry: Entry) {
        entry.timer.cancel()
        let handler = entry.handler
        delivery.async { handler(outcome) }
    }

    private func tellObservers(_ users: Set<UserID>?) {
        let observers = userObservers.withLock { $0 }
        for observer in observers { observer(users) }
    }
}
