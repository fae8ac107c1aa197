import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// One instance's ear on the database: a connection of its own that ran
/// `LISTEN history_changes`, so the instance hears every commit made
/// through any instance (its own included) and wakes its parked
/// long-polls.
///
/// No thread waits on the socket: a Dispatch read source watches it and,
/// when the server sent something, `consumeInput()` reads it without
/// blocking and the notices are decoded and handed to `onNotices`.
///
/// When the connection is lost (the server restarted, the backend was
/// terminated), notifications sent meanwhile are gone for good: the
/// listener reconnects with a bounded backoff (timers on its queue, never
/// a loop that blocks), runs `LISTEN` again, and only then calls `onGap`:
/// the store wakes every parked wait, which reads again and parks again
/// with what it read. Calling it earlier would let a wait re-park before
/// `LISTEN` is back and miss a commit made in between.
///
/// ```swift
/// let listener = PostgresChangeListener(uri: uri, onNotices: { notices in ... }, onGap: { ... })
/// listener.start()
/// listener.close()
/// ```
///
/// The use of `@unchecked Sendable` is safe for this type because every
/// mutable property (`connection`, `source`, `watchedDescriptor`, `attempt`,
/// `isClosed`, `wasListening`) is
/// read and written only on `queue`, a serial queue; the constants are
/// `Sendable`.
public final class PostgresChangeListener: @unchecked Sendable {
    public let uri: String
    private let onNotices: @Sendable ([ChangeNotice]) -> Void
    private let onGap: @Sendable () -> Void
    private let onConnectionLost: @Sendable (_ error: PostgresError, _ failedReconnects: Int) -> Void
    private let queue = DispatchQueue(label: "history-postgres.listener", qos: .userInitiated)

    private var connection: PGConnection?
    private var source: (any DispatchSourceRead)?
    /// The duplicate of the socket the source watches.
    private var watchedDescriptor: Int32 = -1
    /// Failed connects since the connection was last up (the backoff's exponent).
    private var attempt = 0
    private var isClosed = false
    /// Whether the connection was up once: only a reconnect is a gap.
    private var wasListening = false

    /// Connects made, for tests: the first one plus every reconnect.
    private let connectCount = Atomic<Int>(0)
    private let listening = Atomic<Bool>(false)

    /// The shortest and longest wait before reconnecting; doubled per
    /// failed attempt in between.
    static let firstRetryDelayMilliseconds = 50
    static let longestRetryDelayMilliseconds = 2_000
    /// Connect attempts block the listener's own queue (libpq's blocking
    /// connect), never a request's thread: kept short.
    static let connectTimeoutSeconds = 3

    /// - Parameters:
    ///   - onNotices: the notices of one notification, in the order sent.
    ///   - onGap: after a lost connection was replaced and `LISTEN` runs
    ///     again: notices may have been missed.
    ///   - onConnectionLost: what broke, for the log: with 0 when the
    ///     connection was lost, then with the count of failed reconnects
    ///     after each of them.
    public init(uri: String,
                onNotices: @escaping @Sendable ([ChangeNotice]) -> Void,
                onGap: @escaping @Sendable () -> Void,
                onConnectionLost: @escaping @Sendable (_ error: PostgresError, _ failedReconnects: Int) -> Void = { _, _ in }) {
        self.uri = uri
        self.onNotices = onNotices
        self.onGap = onGap
        self.onConnectionLost = onConnectionLost
        queue.setSpecific(key: Self.queueKey, value: ObjectIdentifier(self))
    }

    deinit {
        if let source { source.cancel() } else { connection?.close() }
    }

    /// Connects and listens; returns once `LISTEN` ran, or throws when
    /// the first connect failed (the listener then keeps trying in the
    /// background, and calls `onGap` once it listens).
    public func start() throws(PostgresError) {
        let failure: PostgresError? = queue.sync { () -> PostgresError? in
            do throws(PostgresError) {
                try self.connectAndListen()
                return nil
            } catch {
                self.scheduleReconnect(after: error)
                return error
            }
        }
        if let failure { throw failure }
    }

    /// Stops listening and closes the connection; no handler runs after
    /// it returns (unless called from a handler, on the listener's queue).
    public func close() {
        let work = {
            self.isClosed = true
            self.listening.store(false, ordering: .releasing)
            self.stopWatching()
        }
        if DispatchQueue.getSpecific(key: Self.queueKey) == ObjectIdentifier(self) {
            work()
        } else {
            queue.sync(execute: work)
        }
    }

    /// True while `LISTEN` is in effect on a live connection.
    public var isListening: Bool { listening.load(ordering: .acquiring) }

    /// How many connections the listener opened (tests of reconnects).
    public var connections: Int { connectCount.load(ordering: .relaxed) }

    /// The listening session's backend (tests terminate it), 0 when down.
    public var backendPID: Int32 {
        queue.sync { connection?.backendPID ?? 0 }
    }

    // MARK: - On the queue

    private static let queueKey = DispatchSpecificKey<ObjectIdentifier>()

    private func connectAndListen() throws(PostgresError) {
        guard !isClosed else { return }
        connectCount.add(1, ordering: .relaxed)
        let connection = try PGConnection(uri: uri, applicationName: "history-server listener",
                                          connectTimeout: Self.connectTimeoutSeconds)
        // The channel name is a constant identifier, not input.
        try connection.execute(sql: "LISTEN \(ChangeNotice.channel)")
        // Dispatch watches a duplicate of the socket that only the cancel
        // handler closes. A descriptor may be closed only once Dispatch
        // stopped watching it (its rule for read sources), and libpq closes
        // its own the moment it reads the end of a lost connection: the
        // next connection could then get the same number while Dispatch
        // still unregisters the old one, and lose the new one's events.
        let descriptor = dup(connection.socketDescriptor)
        guard descriptor >= 0 else {
            connection.close()
            throw PostgresError(kind: .connectionLost, message: "cannot watch the listening socket (errno \(errno))")
        }
        let source = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: queue)
        source.setEventHandler { [weak self] in self?.readAvailable() }
        let owned = OwnedConnection(connection)
        source.setCancelHandler {
            owned.connection.close()
            closeDescriptor(descriptor)
        }
        self.connection = connection
        self.source = source
        self.watchedDescriptor = descriptor
        attempt = 0
        source.activate()
        listening.store(true, ordering: .releasing)
        if wasListening { onGap() }
        wasListening = true
        // Notifications that arrived with LISTEN's own answer are already
        // buffered; the source would not fire for them.
        deliverBuffered()
    }

    /// Cancels the source, whose cancel handler closes the connection.
    private func stopWatching() {
        if let source {
            source.cancel()
        } else {
            connection?.close()
        }
        source = nil
        connection = nil
        watchedDescriptor = -1
    }

    /// Reads until the socket has nothing more: Dispatch may report a
    /// socket once for what arrived together (on Linux it watches edges),
    /// and a server that goes away sends its farewell message and its
    /// end-of-file together; a read that took only the message would never
    /// hear of the end, and the listener would sit on a dead session.
    /// Bounded: a socket that keeps being readable gets the next turn from
    /// the source.
    private func readAvailable() {
        guard let connection, !isClosed else { return }
        for _ in 0..<64 {
            do {
                try connection.consumeInput()
            } catch {
                deliverBuffered()
                lose(error)
                return
            }
            deliverBuffered()
            if connection.isBroken {
                lose(PostgresError(kind: .connectionLost, message: "the listening connection broke"))
                return
            }
            guard Self.hasPendingInput(watchedDescriptor) else { return }
        }
    }

    /// Whether a read would not block now: bytes, end-of-file or an error.
    private static func hasPendingInput(_ descriptor: Int32) -> Bool {
        var watched = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&watched, 1, 0) == 1 && watched.revents != 0
    }

    private func deliverBuffered() {
        guard let connection else { return }
        while let notification = connection.nextNotification() {
            guard notification.channel == ChangeNotice.channel else { continue }
            let notices = ChangeNotice.decode(notification.payload).notices
            if !notices.isEmpty { onNotices(notices) }
        }
    }

    private func lose(_ error: PostgresError) {
        listening.store(false, ordering: .releasing)
        stopWatching()
        guard !isClosed else { return }
        onConnectionLost(error, 0)
        reconnect()
    }

    private func reconnect() {
        guard !isClosed else { return }
        do {
            try connectAndListen()
        } catch {
            onConnectionLost(error, attempt + 1)
            scheduleReconnect(after: error)
        }
    }

    private func scheduleReconnect(after error: PostgresError) {
        guard !isClosed else { return }
        // The first listen counts as a gap once it finally works: whatever
        // was committed before it was not heard.
        wasListening = true
        let delay = Self.retryDelayMilliseconds(attempt: attempt)
        attempt += 1
        queue.asyncAfter(deadline: .now() + .milliseconds(delay)) { [weak self] in
            self?.reconnect()
        }
    }

    /// 50 ms, 100 ms, 200 ms, ... up to 2 s.
    package static func retryDelayMilliseconds(attempt: Int) -> Int {
        min(firstRetryDelayMilliseconds << min(attempt, 10), longestRetryDelayMilliseconds)
    }
}

/// The listening connection, handed to its source's cancel handler.
///
/// The use of `@unchecked Sendable` is safe for this type because the
/// handler runs on the listener's serial queue, where every other use of
/// the connection runs too, and after the last of them (the source is
/// cancelled first).
private final class OwnedConnection: @unchecked Sendable {
    let connection: PGConnection
    init(_ connection: PGConnection) { self.connection = connection }
}

/// `close(2)`, out of the reach of `PostgresChangeListener.close()`'s name.
private func closeDescriptor(_ descriptor: Int32) {
    _ = close(descriptor)
}
