import HistoryStore
import Synchronization

/// The users known to have more than `InboxWalk.smallInbox` memberships,
/// shared by the readers, so an inbox page of a large inbox does not count
/// its memberships again each time (counting up to the threshold was most
/// of what made a page of a 10,000-conversation user dearer than one of a
/// 10-conversation user: docs/performance.md, "The inbox rows, after").
///
/// Only "large" is remembered, never "small": the walk down the inbox
/// order serves any user correctly (it reads all the memberships when its
/// budget runs out), so a user who has left conversations since is served
/// less cheaply, never wrongly; while the small path reads at most the
/// threshold's number of memberships, and must know. Bounded: when full it
/// starts over, which costs one count per large inbox.
final class LargeInboxes: Sendable {
    private let users = Mutex<Set<String>>([])
    private let capacity: Int

    init(capacity: Int = 100_000) {
        self.capacity = capacity
    }

    func contains(_ user: UserID) -> Bool {
        users.withLock { $0.contains(user.rawValue) }
    }

    func insert(_ user: UserID) {
        users.withLock { users in
            if users.count >= capacity { users.removeAll(keepingCapacity: true) }
            users.insert(user.rawValue)
        }
    }
}
