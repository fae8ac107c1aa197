import Synchronization

/// When each post's answer reached the load tool, by `client_id`, kept for
/// one run that asks for it (``RunSettings/postAckTimes``):
/// - the bench's inbox feed row times a delivery from its post's commit,
///   which a client sees as the post's answer, not from the post's due time
///   (which would charge the post's own request and group commit, fsync
///   included, to the inbox: the append rows measure those);
/// - `run --scenario feed` checks every acknowledged post reached the feed.
///
/// One table per run, not one per process: runs in one process (the test
/// suite's, in parallel) must not see each other's posts.
final class PostAckTimes: Sendable {
    private let table = Mutex<[String: UInt64]>([:])

    init() {}

    /// A post's answer arrived.
    func record(_ clientID: String, at nanoseconds: UInt64) {
        table.withLock { $0[clientID] = nanoseconds }
    }

    /// Every post answered so far, by `client_id`.
    func all() -> [String: UInt64] {
        table.withLock { $0 }
    }

    /// When the post's answer arrived; nil if it has not (yet).
    func time(of clientID: String) -> UInt64? {
        table.withLock { $0[clientID] }
    }
}
