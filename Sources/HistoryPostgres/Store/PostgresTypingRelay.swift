import Dispatch
import HistoryStore
import Synchronization

/// This instance's typing calls on their way through PostgreSQL, on a
/// session of the relay's own (never a reader's, never the writer's):
///
/// - their access, decided for every call gathered in one tick by one
///   statement (`PostgresTypingAccess`), then answered;
/// - the calls the board accepted, told to the other instances by `NOTIFY`
///   on the change channel (`ChangeNotice.typing`) outside any transaction,
///   since typing is never stored: as few payloads as fit, sent right after
///   the tick's access statement.
///
/// Calls are gathered for `gatherInterval` from the first one, so a
/// thousand typers (500 calls a second) cost a few dozen statements a
/// second instead of a round trip on a page reader per call. A call waits
/// for its answer at most one tick and two round trips; nothing blocks
/// meanwhile (the answer is sent from the relay's queue).
///
/// Access is exact: every call reads the database after it arrived.
/// Relaying is best effort, as typing is: a lost connection loses the
/// notices of that tick (the pool opens a new session for the next), and
/// every instance expires what it heard after 6 s anyway. A lost
/// connection during an access statement is retried once on a new session
/// (a read changes nothing); after that the tick's calls fail as a read
/// would (`.unavailable`).
final class PostgresTypingRelay: Sendable {
    /// Tells the instances apart, so none applies its own calls twice.
    let origin: String
    private let pool: PostgresConnectionPool
    private let queue = DispatchQueue(label: "history-postgres.typing-relay")
    private let pending = Mutex(Pending())
    private let isClosed = Atomic<Bool>(false)
    private let onFailure: @Sendable (PostgresError) -> Void

    /// What waits for the next tick.
    private struct Pending {
        var calls: [(call: PostgresTypingAccess.Call, decided: @Sendable (StoreError?) -> Void)] = []
        var changes: [TypingChange] = []
        /// A tick is scheduled or running: whatever arrives meanwhile
        /// waits for it (or, arriving during it, for the one it schedules).
        var isScheduled = false
    }

    /// Long enough to gather a burst, short against the 2 s a typer waits
    /// between calls. Each tick has costs of its own whatever it carries
    /// (two round trips, the listeners' wake-ups, the answers' hand-over):
    /// at 1,000 typers, 50 ms instead of 20 cost the server 27% less CPU per
    /// call and PostgreSQL 40% less (docs/performance.md, "What a typing
    /// call costs"), for 30 ms more before a call is answered and shown.
    static let gatherInterval: DispatchTimeInterval = .milliseconds(50)
    /// At most this many accepted calls wait to be relayed; more are
    /// dropped (they would expire before a stalled database sent them).
    /// Calls waiting for their access are bounded by the open connections:
    /// each waits for its answer before its connection sends another.
    static let maximumPending = 20_000

    init(uri: String, applicationName: String, onFailure: @escaping @Sendable (PostgresError) -> Void) {
        origin = Self.randomOrigin()
        pool = PostgresConnectionPool(uri: uri, maximumConnections: 1, applicationName: applicationName + " typing",
                                      sessionOptions: "-c plan_cache_mode=force_generic_plan")
        self.onFailure = onFailure
    }

    /// Decides `access` to `conversation` at the next tick; `decided` runs
    /// on the relay's queue, with the refusal or nil.
    func decide(_ access: AccessCheck, to conversation: ConversationID,
                _ decided: @escaping @Sendable (StoreError?) -> Void) {
        let call = PostgresTypingAccess.Call(conversation: conversation, access: access)
        let schedule = pending.withLock { pending -> Bool in
            pending.calls.append((call, decided))
            return Self.scheduling(&pending)
        }
        if schedule { scheduleTick() }
    }

    /// Tells the other instances of an accepted call at the next tick.
    func send(_ change: TypingChange) {
        let schedule = pending.withLock { pending -> Bool in
            guard pending.changes.count < Self.maximumPending else { return false }
            pending.changes.append(change)
            return Self.scheduling(&pending)
        }
        if schedule { scheduleTick() }
    }

    /// Waits for a tick being run, answers the calls still waiting with
    /// `.closed`, drops the changes still queued (typing that would outlive
    /// its instance is of no use), closes the session.
    func close() {
        isClosed.store(true, ordering: .releasing)
        queue.sync {}
        let calls = pending.withLock { pending in
            defer { pending.calls = []; pending.changes = [] }
            return pending.calls
        }
        for waiting in calls { waiting.decided(.closed) }
        pool.close()
    }

    // MARK: - Ticks

    /// True when the caller must schedule a tick (none is).
    private static func scheduling(_ pending: inout Pending) -> Bool {
        guard !pending.isScheduled else { return false }
        pending.isScheduled = true
        return true
    }

    private func scheduleTick() {
        queue.asyncAfter(deadline: .now() + Self.gatherInterval) { self.tick() }
    }

    /// Decides the calls gathered, then relays the changes gathered: those
    /// the board accepted meanwhile, this tick's calls' too (the board
    /// tells `send` while `decided` runs).
    private func tick() {
        let calls = pending.withLock { pending in
            defer { pending.calls = [] }
            return pending.calls
        }
        if !calls.isEmpty { decide(calls) }
        let changes = pending.withLock { pending in
            defer { pending.changes = [] }
            return pending.changes
        }
        if !changes.isEmpty && !isClosed.load(ordering: .acquiring) { relay(changes) }
        let again = pending.withLock { pending -> Bool in
            pending.isScheduled = !pending.calls.isEmpty || !pending.changes.isEmpty
            return pending.isScheduled
        }
        if again { scheduleTick() }
    }

    private func decide(_ calls: [(call: PostgresTypingAccess.Call, decided: @Sendable (StoreError?) -> Void)]) {
        for start in stride(from: 0, to: calls.count, by: PostgresTypingAccess.maximumCallsPerStatement) {
            let chunk = calls[start..<min(start + PostgresTypingAccess.maximumCallsPerStatement, calls.count)]
            let refusals: Result<[StoreError?], StoreError>
            if isClosed.load(ordering: .acquiring) {
                refusals = .failure(.closed)
            } else {
                refusals = decideRetryingOnce(chunk.map(\.call))
            }
            switch refusals {
            case .success(let refusals):
                for (waiting, refusal) in zip(chunk, refusals) { waiting.decided(refusal) }
            case .failure(let error):
                for waiting in chunk { waiting.decided(error) }
            }
        }
    }

    /// A broken session (the server restarted since the last tick) is
    /// replaced and the read run once more: a read changes nothing.
    private func decideRetryingOnce(_ calls: [PostgresTypingAccess.Call]) -> Result<[StoreError?], StoreError> {
        var attempt = 0
        while true {
            attempt += 1
            var broken = false
            do throws(PostgresError) {
                return .success(try pool.withConnection { connection throws(PostgresError) in
                    do throws(PostgresError) {
                        return try PostgresTypingAccess.decide(calls, on: connection)
                    } catch {
                        broken = connection.isBroken
                        throw error
                    }
                })
            } catch {
                if isClosed.load(ordering: .acquiring) { return .failure(.closed) }
                guard broken && attempt < 2 else { return .failure(StoreError(postgres: error)) }
            }
        }
    }

    private func relay(_ changes: [TypingChange]) {
        let payloads = ChangeNotice.payloads(changes.map { .typing($0, origin: origin) })
        do {
            try pool.withConnection { connection throws(PostgresError) in
                let notify = try connection.cachedStatement(sql: ChangeNotice.notifySQL)
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
