import Glibc
import HTTPCore
import Synchronization

/// What one attack's sockets send.
struct SwarmSettings: Sendable {
    var attack: Attack
    var endpoint: ServerEndpoint
    /// How many sockets.
    var sockets: Int
    /// Sockets per attacking client: each client connects from its own
    /// loopback address and sends its own token.
    var socketsPerClient: Int
    /// Slowloris: the pause between two bytes of a head.
    var dripNanoseconds: UInt64 = 2_000_000_000
    /// Requests a non-reader writes before it only waits.
    var pipelined = 4
    /// Non-readers: the page they ask for; flood: where it posts.
    var target = "/"
    /// Flood: the body of every post.
    var body: [UInt8] = []
    /// Long-polls: the conversations they park on, socket i on entry i mod count, from their version then.
    var pollConversations: [(eventsPrefix: String, version: Int64)] = []
    /// Long-polls: `wait=`, seconds.
    var pollWait = 60
    /// Tokens mode: the `Authorization` value of each client (empty: none).
    var authorizations: [String] = []
}

/// One attack's sockets, driven by one thread's epoll until ``stop()``:
/// connects them all at once (non-blocking, each from its client's loopback
/// address), then makes each do its attack, and counts what the server did
/// to them. Its thousands of sockets cost one thread.
final class AttackSwarm: Sendable {
    let settings: SwarmSettings
    private let stopped = Atomic<Bool>(false)
    private let connectsSettled = Atomic<Bool>(false)
    private let counted = Mutex(AttackOutcome())

    init(settings: SwarmSettings) {
        self.settings = settings
    }

    /// True once every socket connected or failed (or a few seconds passed).
    var isReady: Bool { connectsSettled.load(ordering: .acquiring) }

    func stop() { stopped.store(true, ordering: .releasing) }

    var outcome: AttackOutcome { counted.withLock { $0 } }

    /// Runs on the calling thread until ``stop()``, then closes every socket.
    func run() {
        guard let driver = try? SwarmDriver(settings: settings) else {
            counted.withLock { $0.sockets = settings.sockets; $0.connectFailed = settings.sockets }
            connectsSettled.store(true, ordering: .releasing)
            return
        }
        driver.openAll()
        let settleBy = MonotonicClock.now() + 5_000_000_000
        var publishAt: UInt64 = 0
        while !stopped.load(ordering: .acquiring) {
            let now = MonotonicClock.now()
            driver.runDueActions(now: now)
            if !isReady && (driver.pendingConnects == 0 || now > settleBy) {
                connectsSettled.store(true, ordering: .releasing)
            }
            driver.waitAndHandle(timeoutMilliseconds: 20)
            if now >= publishAt {
                let snapshot = driver.outcome
                counted.withLock { $0 = snapshot }
                publishAt = now + 100_000_000
            }
        }
        driver.closeAll()
        let final = driver.outcome
        counted.withLock { $0 = final }
        connectsSettled.store(true, ordering: .releasing)
    }
}

/// One attacking socket's state.
private final class SwarmSocket {
    let index: Int
    var fd: Int32 = -1
    var connecting = false
    var output: [UInt8] = []
    var written = 0
    var parser = ResponseParser()
    /// When its next byte (slowloris), retry (long-poll) or reconnect (flood) is due; 0: nothing due.
    var dueAt: UInt64 = 0
    var dripPosition = 0
    var sawAnswer = false
    var since: Int64 = 0

    init(index: Int) { self.index = index }
}

/// The thread-confined half of ``AttackSwarm``: the epoll set and the sockets.
private final class SwarmDriver {
    let settings: SwarmSettings
    private(set) var outcome = AttackOutcome()
    private(set) var pendingConnects = 0
    private let epoll: Int32
    private let events: UnsafeMutableRawBufferPointer
    private let readBuffer: UnsafeMutableRawBufferPointer
    private var sockets: [SwarmSocket] = []
    private let useSourceAddresses: Bool
    /// EPOLLRDHUP: a non-reader never asks to read, so the server's FIN shows only as this.
    private static let peerClosed: UInt32 = 0x2000

    /// Slowloris: a head that never ends, one byte at a time.
    private static let headStart = Array("GET /v1/conversations/load-0000 HTTP/1.1\r\nHost: abuse\r\n".utf8)
    private static let headFiller = Array("X-Slow: a\r\n".utf8)

    init(settings: SwarmSettings) throws {
        self.settings = settings
        epoll = try Epoll.create()
        events = .allocate(byteCount: 1024 * Epoll.eventStride, alignment: 16)
        readBuffer = .allocate(byteCount: 64 * 1024, alignment: 16)
        useSourceAddresses = LoopbackAddress.isLoopback(settings.endpoint.host) && settings.endpoint.host != "::1"
    }

    deinit {
        closeAll()
        Glibc.close(epoll)
        events.deallocate()
        readBuffer.deallocate()
    }

    func openAll() {
        outcome.sockets = settings.sockets
        sockets = (0..<settings.sockets).map { SwarmSocket(index: $0) }
        for socket in sockets { open(socket) }
    }

    private func client(of socket: SwarmSocket) -> Int { socket.index / max(1, settings.socketsPerClient) }

    private func open(_ socket: SwarmSocket) {
        let source = useSourceAddresses ? LoopbackAddress.source(of: settings.attack, client: client(of: socket)) : nil
        // A small receive window: a non-reader's answers back up into the server, not into this process.
        let receiveBuffer: Int32? = settings.attack == .nonReaders ? 4096 : nil
        guard let fd = RawSocket.startConnect(to: settings.endpoint, nonBlocking: true, from: source, receiveBuffer: receiveBuffer) else {
            outcome.connectFailed += 1
            // The flood does not give up.
            if settings.attack.reconnects { socket.dueAt = MonotonicClock.now() + 100_000_000 }
            return
        }
        socket.fd = fd
        socket.connecting = true
        pendingConnects += 1
        try? Epoll.control(epoll, .add, fd: fd, events: Epoll.writable, token: UInt64(socket.index))
    }

    func closeAll() {
        for socket in sockets where socket.fd >= 0 {
            if socket.connecting {
                outcome.connectFailed += 1
                pendingConnects -= 1
            }
            release(socket)
        }
    }

    private func release(_ socket: SwarmSocket) {
        guard socket.fd >= 0 else { return }
        try? Epoll.control(epoll, .delete, fd: socket.fd, events: 0, token: 0)
        Glibc.close(socket.fd)
        socket.fd = -1
        socket.connecting = false
        socket.output.removeAll()
        socket.written = 0
        socket.parser = ResponseParser()
    }

    /// The server ended a connected socket; the flood comes back for more.
    private func closedByServer(_ socket: SwarmSocket) {
        outcome.closedByServer += 1
        release(socket)
        if settings.attack.reconnects { socket.dueAt = MonotonicClock.now() + 100_000_000 }
    }

    func waitAndHandle(timeoutMilliseconds: Int32) {
        let count = Epoll.wait(epoll, into: events, timeoutMilliseconds: timeoutMilliseconds)
        guard count > 0 else { return }
        for index in 0..<count {
            let event = Epoll.event(at: index, in: events)
            let socket = sockets[Int(event.token)]
            guard socket.fd >= 0 else { continue }
            handle(socket, event.events)
        }
    }

    private func handle(_ socket: SwarmSocket, _ flags: UInt32) {
        if socket.connecting {
            let code = RawSocket.pendingError(socket.fd)
            socket.connecting = false
            pendingConnects -= 1
            guard code == 0 else {
                outcome.connectFailed += 1
                release(socket)
                if settings.attack.reconnects { socket.dueAt = MonotonicClock.now() + 100_000_000 }
                return
            }
            outcome.connected += 1
            return start(socket)
        }
        if flags & Epoll.readable != 0 {
            receive(socket)
            guard socket.fd >= 0 else { return }
        }
        if flags & (Epoll.error | Epoll.hangUp | Self.peerClosed) != 0 && !settings.attack.reconnects && settings.attack != .longPolls {
            return closedByServer(socket)
        }
        if flags & (Epoll.error | Epoll.hangUp) != 0 { return closedByServer(socket) }
        if flags & Epoll.writable != 0 { flush(socket) }
    }

    private func watch(_ socket: SwarmSocket, _ flags: UInt32) {
        try? Epoll.control(epoll, .modify, fd: socket.fd, events: flags, token: UInt64(socket.index))
    }

    /// A socket just connected: its attack begins.
    private func start(_ socket: SwarmSocket) {
        let now = MonotonicClock.now()
        switch settings.attack {
        case .slowloris:
            watch(socket, Epoll.readable)
            // Spread the sockets' bytes over one interval, not all at once.
            socket.dueAt = now + settings.dripNanoseconds * UInt64(socket.index) / UInt64(max(1, settings.sockets))
        case .idle:
            watch(socket, Epoll.readable)
        case .nonReaders:
            watch(socket, Epoll.writable | Self.peerClosed)
            for _ in 0..<settings.pipelined { enqueue(socket, .get, settings.target) }
            flush(socket)
        case .longPolls:
            watch(socket, Epoll.readable)
            let conversation = settings.pollConversations[socket.index % max(1, settings.pollConversations.count)]
            if socket.since == 0 { socket.since = conversation.version }
            sendPoll(socket)
        case .flood:
            watch(socket, Epoll.readable)
            enqueue(socket, .post, settings.target, body: settings.body)
            flush(socket)
        case .badTokens:
            watch(socket, Epoll.readable)
            enqueue(socket, .get, settings.target)
            flush(socket)
        }
    }

    /// Drips slowloris bytes, retries long-polls, reconnects the flood.
    func runDueActions(now: UInt64) {
        for socket in sockets where socket.dueAt != 0 && socket.dueAt <= now {
            switch settings.attack {
            case .slowloris:
                guard socket.fd >= 0, !socket.connecting else { socket.dueAt = 0; continue }
                socket.dueAt = now + settings.dripNanoseconds
                let position = socket.dripPosition
                var byte = position < Self.headStart.count
                    ? Self.headStart[position] : Self.headFiller[(position - Self.headStart.count) % Self.headFiller.count]
                let sent = Glibc.send(socket.fd, &byte, 1, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
                if sent == 1 {
                    socket.dripPosition += 1
                } else if errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR {
                    closedByServer(socket)
                }
            case .longPolls:
                socket.dueAt = 0
                if socket.fd >= 0 { sendPoll(socket) }
            case .flood, .badTokens:
                socket.dueAt = 0
                if socket.fd < 0 { open(socket) }
            case .idle, .nonReaders:
                socket.dueAt = 0
            }
        }
    }

    private func authorization(of socket: SwarmSocket) -> String? {
        settings.authorizations.isEmpty ? nil : settings.authorizations[client(of: socket) % settings.authorizations.count]
    }

    private func enqueue(_ socket: SwarmSocket, _ method: HTTPMethod, _ target: String, body: [UInt8] = []) {
        var headers = HTTPHeaders()
        if !body.isEmpty { headers.add(name: "Content-Type", value: "application/json") }
        if let authorization = authorization(of: socket) { headers.add(name: "Authorization", value: authorization) }
        RequestSerializer.append(HTTPRequest(method: method, target: target, headers: headers, body: body),
                                 host: settings.endpoint.authority, to: &socket.output)
        outcome.requestsSent += 1
    }

    private func sendPoll(_ socket: SwarmSocket) {
        let conversation = settings.pollConversations[socket.index % max(1, settings.pollConversations.count)]
        // Only message 1: no new message is ever in range, so each post wakes the poll for nothing.
        enqueue(socket, .get, conversation.eventsPrefix + "since=\(socket.since)&wait=\(settings.pollWait)&min_id=1&max_id=1")
        flush(socket)
    }

    private func flush(_ socket: SwarmSocket) {
        while socket.written < socket.output.count {
            let count = socket.output.withUnsafeBytes { bytes in
                Glibc.send(socket.fd, bytes.baseAddress! + socket.written, bytes.count - socket.written, Int32(MSG_NOSIGNAL))
            }
            if count > 0 {
                socket.written += count
            } else if count < 0 && errno == EINTR {
                continue
            } else if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                let reading: UInt32 = settings.attack == .nonReaders ? Self.peerClosed : Epoll.readable
                return watch(socket, reading | Epoll.writable)
            } else {
                return closedByServer(socket)
            }
        }
        socket.output.removeAll(keepingCapacity: true)
        socket.written = 0
        // A non-reader that wrote its requests waits on the server's close alone.
        watch(socket, settings.attack == .nonReaders ? Self.peerClosed : Epoll.readable)
    }

    private func receive(_ socket: SwarmSocket) {
        while socket.fd >= 0 {
            let count = recv(socket.fd, readBuffer.baseAddress, readBuffer.count, Int32(MSG_DONTWAIT))
            if count == 0 { return closedByServer(socket) }
            if count < 0 {
                if errno == EINTR { continue }
                if errno != EAGAIN && errno != EWOULDBLOCK { closedByServer(socket) }
                return
            }
            let bytes = UnsafeRawBufferPointer(rebasing: readBuffer[0..<count])
            switch settings.attack {
            case .slowloris, .idle, .nonReaders:
                // These never asked for an answer: the first one says why the server ended them.
                if !socket.sawAnswer {
                    socket.sawAnswer = true
                    outcome.statuses[Self.status(of: bytes) ?? 0, default: 0] += 1
                }
            case .longPolls, .flood, .badTokens:
                socket.parser.append(bytes)
                do {
                    while let response = try socket.parser.next(answersHead: false) { answered(socket, response) }
                } catch {
                    return closedByServer(socket)
                }
            }
        }
    }

    private func answered(_ socket: SwarmSocket, _ response: HTTPClientResponse) {
        outcome.statuses[response.status, default: 0] += 1
        switch settings.attack {
        case .longPolls:
            if response.status == 200, let version = (try? BodyScan.integers(response.body, ["version"]))?.first ?? nil {
                socket.since = version
                sendPoll(socket)
            } else {
                // Refused (a cap, a limit): ask again a second later, as a stubborn client would.
                socket.dueAt = MonotonicClock.now() + 1_000_000_000
            }
        case .flood:
            enqueue(socket, .post, settings.target, body: settings.body)
            flush(socket)
        case .badTokens:
            enqueue(socket, .get, settings.target)
            flush(socket)
        default:
            break
        }
    }

    /// The status code of `HTTP/1.1 NNN` at the start of `bytes`.
    static func status(of bytes: UnsafeRawBufferPointer) -> Int? {
        guard bytes.count >= 12, bytes[0] == UInt8(ascii: "H") else { return nil }
        var value = 0
        for offset in 9..<12 {
            let digit = Int(bytes[offset]) - 48
            guard (0...9).contains(digit) else { return nil }
            value = value * 10 + digit
        }
        return value
    }
}
