import Synchronization

/// When each post's answer reached the load tool, by `client_id`, kept
/// while the bench's inbox feed row runs: that row times a delivery from
/// its post's commit, which a client sees as the post's answer, not from
/// the post's due time (which would charge the post's own request and
/// group commit, fsync included, to the inbox: the append rows measure
/// those).
enum PostAckTimes {
    private static let table = Mutex<[String: UInt64]?>(nil)

    /// Starts keeping answers' times (empty).
    static func start() {
        table.withLock { $0 = [:] }
    }

    /// Stops and forgets them.
    static func stop() {
        table.withLock { $0 = nil }
    }

    /// A post's answer arrived (does nothing unless started).
    static func record(_ clientID: String, at nanoseconds: UInt64) {
        table.withLock { table in table?[clientID] = nanoseconds }
    }

    /// Every post answered since ``start()``, by `client_id`.
    static func all() -> [String: UInt64] {
        table.withLock { $0 ?? [:] }
    }

    /// When the post's answer arrived; nil if it has not (yet).
    static func time(of clientID: String) -> UInt64? {
        table.withLock { $0?[clientID] }
    }
}
