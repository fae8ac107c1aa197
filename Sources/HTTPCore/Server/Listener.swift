import Dispatch
import Glibc

/// The listening socket: accepts on a read source, in a loop until the
/// backlog is empty, and hands each new socket to `onAccept`.
///
/// When the process runs out of descriptors (EMFILE, ENFILE) the pending
/// connection stays in the backlog and the source would fire again at once;
/// accepting pauses for `descriptorPause` instead of spinning.
///
/// The use of `@unchecked Sendable` is safe for this type because: its
/// mutable state (`source`, `paused`, `stopped`) and the socket are touched
/// only on `queue`.
final class Listener: @unchecked Sendable {
    static let descriptorPause: DispatchTimeInterval = .milliseconds(100)

    let address: SocketAddress
    private let socket: Socket
    private let queue = DispatchQueue(label: "HTTPCore.Listener")
    private let onAccept: @Sendable (Socket, SocketAddress?) -> Void
    private var source: (any DispatchSourceRead)?
    private var paused = false
    private var stopped = false

    init(address: SocketAddress, backlog: Int32, onAccept: @escaping @Sendable (Socket, SocketAddress?) -> Void) throws(SocketError) {
        socket = try Socket.listening(on: address, backlog: backlog)
        do {
            self.address = try socket.localAddress()
        } catch {
            socket.close()
            throw error
        }
        self.onAccept = onAccept
    }

    func start() {
        queue.sync {
            let source = DispatchSource.makeReadSource(fileDescriptor: socket.descriptor, queue: queue)
            source.setEventHandler { [unowned self] in acceptPending() }
            source.setCancelHandler { [self] in socket.close() }
            self.source = source
            source.activate()
        }
    }

    private func acceptPending() {
        for _ in 0..<256 {
            do {
                guard let (client, address) = try socket.accept() else { return }
                onAccept(client, address)
            } catch {
                switch error.errno {
                case ECONNABORTED, EPROTO:
                    continue  // the peer gave up before we accepted: not our problem
                case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                    pause()
                    return
                default:
                    pause()
                    return
                }
            }
        }
    }

    private func pause() {
        guard let source, !paused else { return }
        paused = true
        source.suspend()
        queue.asyncAfter(deadline: .now() + Self.descriptorPause) { [self] in
            guard paused else { return }
            paused = false
            if !stopped { self.source?.resume() }
        }
    }

    /// Stops accepting and closes the socket, then calls `completion`.
    func stop(completion: @escaping @Sendable () -> Void) {
        queue.async { [self] in
            guard !stopped, let source else {
                if source == nil { socket.close() }
                completion()
                return
            }
            stopped = true
            source.setCancelHandler { [self] in
                socket.close()
                completion()
            }
            source.cancel()
            if paused {
                paused = false
                source.resume()
            }
            self.source = nil
        }
    }
}
