import HistoryAccess
import HistoryStore
import Synchronization

/// The polls parked now (conversation feeds and inbox feeds), so a draining server can answer them all, a
/// removed member's can be answered 404, and no client parks more than
/// its share (`ClientLimits.maximumParkedPollsPerClient`): a parked poll
/// holds a connection and a waiter, and one client's thousands of them
/// must not crowd out everyone else's.
final class LongPollRegistry: Sendable {
    private struct State: Sendable {
        var polls: [ObjectIdentifier: any ParkedPoll] = [:]
        var perClient: [ClientKey: Int] = [:]
        /// The polls that read a conversation as a member, by that member.
        var byMember: [UserID: Set<ObjectIdentifier>] = [:]
        var draining = false
    }

    /// What `register` did.
    enum Registration: Equatable {
        case parked
        /// The server is draining: answer at once instead of parking.
        case draining
        /// The poll's client already has this many parked: answer 429.
        case overClientLimit(Int)
    }

    private let maximumPerClient: Int
    private let state = Mutex(State())
    private let rereads = Atomic<Int>(0)

    init(maximumPerClient: Int = .max) {
        self.maximumPerClient = maximumPerClient
    }

    func register(_ poll: any ParkedPoll) -> Registration {
        state.withLock { state in
            guard !state.draining else { return .draining }
            if let client = poll.client {
                let parked = state.perClient[client, default: 0]
                guard parked < maximumPerClient else { return .overClientLimit(maximumPerClient) }
                state.perClient[client] = parked + 1
            }
            state.polls[ObjectIdentifier(poll)] = poll
            if let user = poll.memberUser { state.byMember[user, default: []].insert(ObjectIdentifier(poll)) }
            return .parked
        }
    }

    func unregister(_ poll: any ParkedPoll) {
        state.withLock { state in
            guard state.polls.removeValue(forKey: ObjectIdentifier(poll)) != nil else { return }
            if let user = poll.memberUser {
                state.byMember[user]?.remove(ObjectIdentifier(poll))
                if state.byMember[user]?.isEmpty == true { state.byMember[user] = nil }
            }
            guard let client = poll.client else { return }
            let left = state.perClient[client, default: 1] - 1
            state.perClient[client] = left > 0 ? left : nil
        }
    }

    var isDraining: Bool { state.withLock { $0.draining } }

    /// Answers 404 every poll `user` has parked on `conversation`: a
    /// removed member loses access at once, parked requests included.
    func revoke(user: UserID, in conversation: ConversationID) {
        for poll in memberPolls(of: [user]) { poll.revokeIfReading(conversation, as: user) }
    }

    /// The store saw `users`' memberships change (nil: anyone's may have),
    /// maybe through another instance, whose removals `revoke` never
    /// hears: each of their polls that reads a conversation as a member
    /// asks the store again, on the read pool, and answers 404 if the
    /// membership is gone. A commit names few users, and only their polls
    /// are looked at (`byMember`).
    func recheckMemberships(of users: Set<UserID>?, on readPool: ReadPool) {
        for poll in memberPolls(of: users) { readPool.submit { poll.recheckMembership() } }
    }

    /// The parked polls that read a conversation as one of `users` (nil: as anyone).
    private func memberPolls(of users: Set<UserID>?) -> [any ParkedPoll] {
        state.withLock { state in
            guard let users else { return state.polls.values.filter { $0.memberUser != nil } }
            return users.flatMap { user in (state.byMember[user] ?? []).compactMap { state.polls[$0] } }
        }
    }

    var count: Int { state.withLock { $0.polls.count } }

    /// A parked poll was woken and reads again: what a wake costs, counted
    /// so that wakes which cannot concern a poll can be shown to cost none.
    func countReread() {
        rereads.add(1, ordering: .relaxed)
    }

    var rereadCount: Int { rereads.load(ordering: .relaxed) }

    /// From now on no poll parks; every parked one is answered.
    func drain() {
        let polls = state.withLock { state in
            state.draining = true
            return Array(state.polls.values)
        }
        for poll in polls { poll.cancel() }
    }
}
