import Dispatch
import HistoryStore
import Synchronization

/// Tells the other instances of this instance's accepted typing calls:
/// `NOTIFY` on the change channel (`ChangeNotice.typing`), outside any
/// transaction, since typing is never stored.
///
/// Calls are gathered for `gatherInterval` and sent as few payloads as fit,
/// on a session of the relay's own, so a thousand typers cost a few
/// notifications a second and never a reader's session nor the writer's.
/// Best effort, as typing is: a lost connection loses what was queued (the
/// pool opens a new session for the next batch), and every instance expires
/// what it heard after 6 s anyway.
final class PostgresTypingRelay: Sendable {
    /// Tells the instances apart, so none applies its own calls twice.
    let origin: String
    private let pool: PostgresConnectionPool
    private let queue = DispatchQueue(label: "history-postgres.typing-relay")
    private let pending = Mutex<[TypingChange]>([])
    private let isClosed = Atomic<Bool>(false)
    private let onFailure: @Sendable (PostgresError) -> Void

    /// Long enough to gather a burst, short against the 2 s a typer waits between calls.
    static let gatherInterval: DispatchTimeInterval = .milliseconds(20)
    /// At most this many calls wait for a batch; more are dropped (they
    /// would expire before a stalled database sent them).
    static let maximumPending = 20_000

    init(uri: String, applicationName: String, onFailure: @escaping @Sendable (PostgresError) -> Void) {
        origin = Self.randomOrigin()
        pool = PostgresConnectionPool(uri: uri, maximumConnections: 1, applicationName: applicationName + " typing")
        self.onFailure = onFailure
    }

    func send(_ change: TypingChange) {
        let first = pending.withLock { pending -> Bool in
            guard pending.count < Self.maximumPending else { return false }
            pending.append(change)
            return pending.count == 1
        }
        if first { queue.asyncAfter(deadline: .now() + Self.gatherInterval) { self.flush() } }
    }

    /// Waits for a batch being sent, drops what is still queued (typing
    /// that would outlive its instance is of no use), closes the session.
    func close() {
        isClosed.store(true, ordering: .releasing)
        queue.sync {}
        pool.close()
    }

    private func flush() {
        let changes = pending.withLock { pending in
            defer { pending = [] }
            return pending
        }
        guard !changes.isEmpty, !isClosed.load(ordering: .acquiring) else { return }
        let payloads = ChangeNotice.payloads(changes.map { .typing($0, origin: origin) })
        do {
            try pool.withConnection { connection throws(PostgresError) in
                let notify = try connection.cachedStatement(sql: "SELECT pg_notify($1, $2)")
                for payload in payloads {
                    _ = try connection.execute(notify, [.text(ChangeNotice.channel), .text(payload)])
                }
            }
        } catch {
            onFailure(error)
        }
    }

    private static func randomOrigin() -> String {
        var generator = SystemRandomNumberGenerator()
        return String(generator.next() as UInt64, radix: 36)
    }
}
