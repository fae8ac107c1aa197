import Dispatch
import Glibc
import Synchronization

/// The HTTP/1.1 server: a listener plus one `HTTPConnection` per client,
/// all served by one set of `threadCount` threads (`ConnectionWorkers`).
///
/// ```swift
/// let server = HTTPServer(configuration: .init(port: 0), responder: MyResponder())
/// try server.start()
/// print(server.port)
/// server.shutdown(gracePeriod: .seconds(5)) { print("drained") }
/// ```
public final class HTTPServer: Sendable {
    private struct State {
        var listener: Listener?
        var connections: [Int: HTTPConnection] = [:]
        /// Open connections by peer address (without the port; IPv6 by its /64), for
        /// `maximumConnectionsPerPeer`; a peer with none has no entry.
        var connectionsPerPeer: [String: Int] = [:]
        var peerOfConnection: [Int: String] = [:]
        var nextID = 0
        var workers: ConnectionWorkers?
        var port = 0
        var shuttingDown = false
        /// Left once every connection is closed, during shutdown.
        var drained: DispatchGroup?
        /// Done once the listener and every connection are closed.
        var shutdown: DispatchGroup?
    }

    private let configuration: HTTPServerConfiguration
    private let responder: any HTTPResponder
    private let observer: (any HTTPServerObserver)?
    private let state = Mutex(State())

    public init(configuration: HTTPServerConfiguration, responder: any HTTPResponder,
                observer: (any HTTPServerObserver)? = nil) {
        self.configuration = configuration
        self.responder = responder
        self.observer = observer
    }

    /// Binds, listens and starts accepting; returns once listening.
    /// - Throws: `SocketError` (e.g. `EADDRINUSE`), or `EINVAL` for a host
    ///   that is not an IP literal or `localhost`.
    public func start() throws {
        let usable = state.withLock { $0.listener == nil && !$0.shuttingDown }
        guard usable else { throw SocketError(errno: EALREADY, function: "start (already started or shut down)") }
        guard let address = SocketAddress(host: configuration.host, port: configuration.port) else {
            throw SocketError(errno: EINVAL, function: "bind to host \(configuration.host)")
        }
        let workers = try ConnectionWorkers(threads: configuration.threadCount,
                                            blockingLimit: configuration.blockingThreadLimit)
        let listener: Listener
        do {
            listener = try Listener(address: address, backlog: configuration.backlog) { [weak self] socket, peer in
                guard let self else {
                    socket.close()
                    return
                }
                accepted(socket, peer: peer)
            }
        } catch {
            workers.stop()
            throw error
        }
        let installed = state.withLock { state -> Bool in
            guard state.listener == nil && !state.shuttingDown else { return false }
            state.listener = listener
            state.workers = workers
            state.port = listener.address.port
            return true
        }
        guard installed else {
            workers.stop()
            listener.stop {}
            throw SocketError(errno: EALREADY, function: "start (already started or shut down)")
        }
        listener.start()
    }

    /// The bound port (the real one when the configuration asked for 0).
    public var port: Int { state.withLock { $0.port } }

    public var openConnectionCount: Int { state.withLock { $0.connections.count } }

    // MARK: - Accepting

    private func accepted(_ socket: Socket, peer: SocketAddress?) {
        do {
            try socket.setOption(Int32(IPPROTO_TCP), TCP_NODELAY, 1)
        } catch {
            socket.close()
            return
        }
        let remote = peer?.description ?? "unknown"
        let address = peer?.ipAddress
        // An IPv6 peer counts by its /64, like every per-client limit.
        let peerHost = address?.limitKey ?? peer?.host ?? "unknown"
        let exempt = address.map { address in configuration.uncappedPeers.contains { $0.contains(address) } } ?? false
        let perPeerLimit = exempt ? 0 : configuration.maximumConnectionsPerPeer
        let (connection, count): (HTTPConnection?, Int) = state.withLock { state in
            guard !state.shuttingDown, let workers = state.workers,
                  state.connections.count < configuration.maximumConnections,
                  perPeerLimit <= 0 || state.connectionsPerPeer[peerHost, default: 0] < perPeerLimit else {
                return (nil, state.connections.count)
            }
            state.nextID += 1
            state.connectionsPerPeer[peerHost, default: 0] += 1
            state.peerOfConnection[state.nextID] = peerHost
            let connection = HTTPConnection(
                id: state.nextID, socket: socket, remoteAddress: remote, peerHost: peer?.host ?? "-", workers: workers,
                limits: configuration.limits,
                responder: responder, observer: observer,
                onClosed: { [weak self] connection in self?.connectionClosed(connection) })
            state.connections[state.nextID] = connection
            return (connection, state.connections.count)
        }
        guard let connection else {
            reject(socket)
            return
        }
        observer?.openConnectionsChanged(to: count)
        connection.start()
    }

    /// Over `maximumConnections` (or the peer's share): one small 503 written without waiting (it
    /// fits any socket buffer), then close without a reset.
    private func reject(_ socket: Socket) {
        let shuttingDown = state.withLock { $0.shuttingDown }
        let response = responder.errorResponse(for: shuttingDown ? .shuttingDown : .tooManyConnections)
        var bytes: [UInt8] = []
        ResponseSerializer.append(response, omitBody: false, connection: .close, to: &bytes)
        let written = bytes.withUnsafeBytes { try? socket.send($0) } ?? nil
        socket.shutdownOutput()
        Self.discardReceivedInput(socket)
        socket.close()
        if written == bytes.count {
            observer?.exchangeCompleted(HTTPExchange(method: "", target: "", status: 503, bytes: response.body.count,
                                                     microseconds: 0, route: nil))
        }
    }

    /// Reads away what the client already sent (up to 64 KiB, without
    /// waiting): closing a socket with unread input makes the kernel answer
    /// with a reset, which can destroy the 503 before the client reads it.
    private static func discardReceivedInput(_ socket: Socket) {
        withUnsafeTemporaryAllocation(byteCount: 16 * 1024, alignment: 1) { buffer in
            for _ in 0..<4 {
                guard let count = (try? socket.receive(into: buffer)) ?? nil, count > 0 else { return }
            }
        }
    }

    private func connectionClosed(_ connection: HTTPConnection) {
        let (count, drained): (Int, DispatchGroup?) = state.withLock { state in
            state.connections[connection.id] = nil
            if let peer = state.peerOfConnection.removeValue(forKey: connection.id) {
                let left = state.connectionsPerPeer[peer, default: 1] - 1
                state.connectionsPerPeer[peer] = left > 0 ? left : nil
            }
            let count = state.connections.count
            if count == 0, let group = state.drained {
                state.drained = nil
                return (count, group)
            }
            return (count, nil)
        }
        observer?.openConnectionsChanged(to: count)
        drained?.leave()
    }

    // MARK: - Shutdown

    /// Stops accepting; closes idle keep-alive connections now; lets requests
    /// in flight finish up to `gracePeriod` (their responses get
    /// `Connection: close`); then closes everything (pending `onClose`
    /// handlers run); then calls `completion`.
    public func shutdown(gracePeriod: Duration, completion: @escaping @Sendable () -> Void) {
        let (group, isFirst, listener, connections) = state.withLock { state in
            if let group = state.shutdown { return (group, false, nil as Listener?, [HTTPConnection]()) }
            let group = DispatchGroup()
            group.enter()  // the listener is closed
            group.enter()  // every connection is closed
            state.shutdown = group
            state.shuttingDown = true
            let listener = state.listener
            state.listener = nil
            if state.connections.isEmpty { group.leave() } else { state.drained = group }
            return (group, true, listener, Array(state.connections.values))
        }
        defer {
            group.notify(queue: .global()) { [self] in
                if isFirst {
                    let workers = state.withLock { state in
                        defer { state.workers = nil }
                        return state.workers
                    }
                    workers?.stop()
                }
                completion()
            }
        }
        guard isFirst else { return }
        if let listener {
            listener.stop { group.leave() }
        } else {
            group.leave()
        }
        for connection in connections { connection.beginShutdown() }
        let nanoseconds = ConnectionStateMachine.Timeouts.nanoseconds(gracePeriod)
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(clamping: nanoseconds))) { [self] in
            let remaining = state.withLock { Array($0.connections.values) }
            for connection in remaining { connection.forceClose() }
        }
    }
}
