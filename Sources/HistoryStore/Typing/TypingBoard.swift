import Dispatch
import Synchronization

/// Who is typing in which conversation, in memory only: typing is never
/// stored, and lasts seconds (docs/API.md, "Live").
///
/// A caller's `tell` is weighed here: a call within `quietPeriod` of the
/// caller's last accepted one is dropped (answered, never broadcast), so
/// a client that sends on every keystroke costs one change per 2 s at most.
/// An accepted call goes to `relay` (PostgreSQL: a notice that every other
/// instance `hear`s), and each instance expires on its own clock what it
/// was told or heard, so a typer who vanishes with its instance still
/// disappears everywhere after `lasts`.
///
/// Observers (a long-poll with `typing=1`, a stream) are called with the
/// whole new list on every change of a conversation's list, expiry
/// included, on one serial queue, in the order the changes happened. A
/// renewal that changes no list calls no one.
///
/// Memory is bounded twice: `maximumPerConversation` typers shown per
/// conversation, `maximumEntries` entries in all; a sweep every
/// `sweepInterval` removes expired typers and forgets callers whose quiet
/// period is over.
///
/// ```swift
/// let board = TypingBoard()
/// let token = board.observe(general) { typers in print(typers) }
/// board.tell(true, user: ana, in: general)   // prints [ana]
/// board.stopObserving(token)
/// ```
package final class TypingBoard: Sendable {
    /// What one user's calls left behind in one conversation.
    private struct Entry {
        /// Shown typing until then; nil when not typing.
        var typingUntil: ContinuousClock.Instant?
        /// This instance's last accepted call of the user's; nil for what
        /// was only heard from another instance, which applied the rule.
        var lastAccepted: ContinuousClock.Instant?
    }

    private struct Observer {
        let conversation: ConversationID
        let handler: @Sendable ([UserID]) -> Void
    }

    private struct State {
        var timing: TypingTiming
        var entries: [ConversationID: [UserID: Entry]] = [:]
        var entryCount = 0
        var nextObserver: UInt64 = 1
        var observers: [UInt64: Observer] = [:]
        var observersByConversation: [ConversationID: Set<UInt64>] = [:]
        var relay: (@Sendable (TypingChange) -> Void)?
        var isClosed = false
    }

    /// The outcome of a caller's call.
    package enum Outcome: Hashable, Sendable {
        /// Accepted and broadcast (to this instance's observers when the
        /// list changed, to the other instances always).
        case accepted
        /// Within the quiet period of the caller's last accepted call: nothing changed.
        case tooSoon
        /// A `true` that found the conversation's (or the board's) cap reached.
        case full
        /// A `false` from a user not shown typing: nothing to change.
        case unchanged
    }

    private let state: Mutex<State>
    private let delivery = DispatchQueue(label: "history-store.typing")
    /// Set once, right after init (the sweep needs `self`).
    private let sweeper = Mutex<RepeatingTimer?>(nil)

    package init(timing: TypingTiming = .standard) {
        state = Mutex(State(timing: timing))
        let timer = RepeatingTimer(queue: delivery, every: timing.sweepInterval) { [weak self] in self?.sweep() }
        sweeper.withLock { $0 = timer }
    }

    deinit {
        sweeper.withLock { $0?.cancel() }
    }

    /// Replaces the durations and caps (tests use short ones); the sweep
    /// follows the new `lasts`.
    package func use(_ timing: TypingTiming) {
        state.withLock { $0.timing = timing }
        sweeper.withLock { $0?.reschedule(every: timing.sweepInterval) }
    }

    package var timing: TypingTiming { state.withLock { $0.timing } }

    /// Where accepted calls go beyond this instance (PostgreSQL's notices).
    package func relay(to relay: @escaping @Sendable (TypingChange) -> Void) {
        state.withLock { $0.relay = relay }
    }

    // MARK: - Calls

    /// A caller's call, under the quiet-period rule and the caps.
    @discardableResult
    package func tell(_ typing: Bool, user: UserID, in conversation: ConversationID,
                      now: ContinuousClock.Instant = .now) -> Outcome {
        let (outcome, relay) = state.withLock { state -> (Outcome, (@Sendable (TypingChange) -> Void)?) in
            guard !state.isClosed else { return (.unchanged, nil) }
            let entry = state.entries[conversation]?[user]
            if let last = entry?.lastAccepted, now - last < state.timing.quietPeriod { return (.tooSoon, nil) }
            let wasTyping = entry?.typingUntil.map { $0 > now } ?? false
            if typing {
                if entry == nil && !Self.hasRoom(for: conversation, in: state) { return (.full, nil) }
                Self.put(Entry(typingUntil: now + state.timing.lasts, lastAccepted: now), user: user,
                         in: conversation, state: &state)
            } else {
                guard entry != nil else { return (.unchanged, nil) }
                Self.put(Entry(typingUntil: nil, lastAccepted: now), user: user, in: conversation, state: &state)
            }
            if wasTyping != typing { deliver(Self.notification(for: conversation, in: state, now: now)) }
            return (.accepted, state.relay)
        }
        if outcome == .accepted { relay?(TypingChange(conversation: conversation, user: user, typing: typing)) }
        return outcome
    }

    /// `user` left `conversation`: no longer shown, whatever the quiet
    /// period, and the other instances are told (a stop).
    package func forget(_ user: UserID, in conversation: ConversationID, now: ContinuousClock.Instant = .now) {
        let relay = state.withLock { state -> (@Sendable (TypingChange) -> Void)? in
            guard !state.isClosed, let entry = state.entries[conversation]?[user] else { return nil }
            state.entries[conversation]?[user] = nil
            if state.entries[conversation]?.isEmpty == true { state.entries[conversation] = nil }
            state.entryCount -= 1
            guard let until = entry.typingUntil, until > now else { return nil }
            deliver(Self.notification(for: conversation, in: state, now: now))
            return state.relay
        }
        relay?(TypingChange(conversation: conversation, user: user, typing: false))
    }

    /// A call another instance accepted: applied as is (that instance
    /// weighed the quiet period), expiring on this instance's clock.
    package func hear(_ change: TypingChange, now: ContinuousClock.Instant = .now) {
        state.withLock { state in
            guard !state.isClosed else { return }
            let entry = state.entries[change.conversation]?[change.user]
            let wasTyping = entry?.typingUntil.map { $0 > now } ?? false
            if change.typing {
                if entry == nil && !Self.hasRoom(for: change.conversation, in: state) { return }
                Self.put(Entry(typingUntil: now + state.timing.lasts, lastAccepted: entry?.lastAccepted),
                         user: change.user, in: change.conversation, state: &state)
            } else if let entry {
                Self.put(Entry(typingUntil: nil, lastAccepted: entry.lastAccepted), user: change.user,
                         in: change.conversation, state: &state)
            }
            if wasTyping != change.typing { deliver(Self.notification(for: change.conversation, in: state, now: now)) }
        }
    }

    // MARK: - Reading and observing

    /// Everyone typing in `conversation` now, in user order.
    package func typers(in conversation: ConversationID, now: ContinuousClock.Instant = .now) -> [UserID] {
        state.withLock { Self.typers(in: conversation, of: $0, now: now) }
    }

    /// Calls `handler` with the whole list after every change of
    /// `conversation`'s list, until `stopObserving`.
    package func observe(_ conversation: ConversationID,
                         _ handler: @escaping @Sendable ([UserID]) -> Void) -> TypingObservation {
        state.withLock { state in
            let token = state.nextObserver
            state.nextObserver += 1
            state.observers[token] = Observer(conversation: conversation, handler: handler)
            state.observersByConversation[conversation, default: []].insert(token)
            return TypingObservation(rawValue: token)
        }
    }

    package func stopObserving(_ observation: TypingObservation) {
        state.withLock { state in
            guard let observer = state.observers.removeValue(forKey: observation.rawValue) else { return }
            state.observersByConversation[observer.conversation]?.remove(observation.rawValue)
            if state.observersByConversation[observer.conversation]?.isEmpty == true {
                state.observersByConversation[observer.conversation] = nil
            }
        }
    }

    /// Entries kept now (typers and callers in their quiet period): a metric, and the caps' tests.
    package var entryCount: Int { state.withLock { $0.entryCount } }

    package var observerCount: Int { state.withLock { $0.observers.count } }

    /// Forgets everything and stops sweeping; later calls change nothing.
    package func close() {
        state.withLock { state in
            state.isClosed = true
            state.entries = [:]
            state.entryCount = 0
            state.observers = [:]
            state.observersByConversation = [:]
            state.relay = nil
        }
        sweeper.withLock { $0?.cancel() }
    }

    // MARK: - Sweeping

    /// Removes expired typers (a change of their conversations' lists) and
    /// callers whose quiet period is over.
    ///
    /// Only what changes is written: the sweep runs four times a second
    /// under the board's lock, and rewriting every entry copied each
    /// conversation's table (and, written back while iterated, the board's)
    /// at every sweep, a thousand entries at 1,000 typers.
    package func sweep(now: ContinuousClock.Instant = .now) {
        state.withLock { state in
            guard state.entryCount > 0 else { return }
            var changed: [ConversationID] = []
            var rewritten: [(ConversationID, [UserID: Entry])] = []
            let quiet = state.timing.quietPeriod
            for (conversation, users) in state.entries {
                var kept = users
                var listChanged = false
                var written = false
                for (user, entry) in users {
                    let expired = entry.typingUntil.map { $0 <= now } ?? false
                    let typing = expired ? nil : entry.typingUntil
                    let quietOver = entry.lastAccepted.map { now - $0 >= quiet } ?? true
                    if typing == nil && quietOver {
                        kept[user] = nil
                        written = true
                    } else if expired {
                        kept[user] = Entry(typingUntil: nil, lastAccepted: entry.lastAccepted)
                        written = true
                    }
                    listChanged = listChanged || expired
                }
                if written { rewritten.append((conversation, kept)) }
                if listChanged { changed.append(conversation) }
            }
            for (conversation, kept) in rewritten {
                state.entryCount -= (state.entries[conversation]?.count ?? 0) - kept.count
                state.entries[conversation] = kept.isEmpty ? nil : kept
            }
            for conversation in changed { deliver(Self.notification(for: conversation, in: state, now: now)) }
        }
    }

    // MARK: - Private

    /// A list to hand to a conversation's observers.
    private struct Notification {
        let typers: [UserID]
        let handlers: [@Sendable ([UserID]) -> Void]
    }

    private static func hasRoom(for conversation: ConversationID, in state: State) -> Bool {
        state.entryCount < state.timing.maximumEntries
            && (state.entries[conversation]?.count ?? 0) < state.timing.maximumPerConversation
    }

    private static func put(_ entry: Entry, user: UserID, in conversation: ConversationID, state: inout State) {
        if state.entries[conversation, default: [:]].updateValue(entry, forKey: user) == nil {
            state.entryCount += 1
        }
    }

    private static func typers(in conversation: ConversationID, of state: State, now: ContinuousClock.Instant) -> [UserID] {
        guard let users = state.entries[conversation] else { return [] }
        return users.compactMap { user, entry in entry.typingUntil.map { $0 > now } == true ? user : nil }.sorted()
    }

    /// Nil when no one observes the conversation.
    private static func notification(for conversation: ConversationID, in state: State,
                                     now: ContinuousClock.Instant) -> Notification? {
        guard let tokens = state.observersByConversation[conversation], !tokens.isEmpty else { return nil }
        return Notification(typers: typers(in: conversation, of: state, now: now),
                            handlers: tokens.compactMap { state.observers[$0]?.handler })
    }

    /// Queued under the board's lock, so observers see the changes in the
    /// order they were made; run on the serial queue, never under the lock.
    private func deliver(_ notification: Notification?) {
        guard let notification else { return }
        delivery.async {
            for handler in notification.handlers { handler(notification.typers) }
        }
    }
}

/// One accepted call, as instances tell each other.
public struct TypingChange: Hashable, Sendable {
    public let conversation: ConversationID
    public let user: UserID
    public let typing: Bool

    public init(conversation: ConversationID, user: UserID, typing: Bool) {
        self.conversation = conversation
        self.user = user
        self.typing = typing
    }
}

/// Names one observation, for `stopObserving`.
public struct TypingObservation: Hashable, Sendable {
    public let rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }
}
