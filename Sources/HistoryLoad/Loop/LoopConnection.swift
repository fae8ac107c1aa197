import Glibc
import HTTPCore
import Synchronization

/// One virtual user's non-blocking keep-alive connection on an event loop:
/// writes each request with HTTPCore's `RequestSerializer`, feeds what
/// arrives to HTTPCore's `ResponseParser`, records the answer like
/// ``LoadConnection`` does, and reconnects after a failure.
///
/// Not Sendable: its loop's thread owns it.
final class LoopConnection: RequestDriver {
    private struct InFlight {
        var kind: RequestKind
        var accepted: ClosedRange<Int>
        var start: UInt64
        var answersHead: Bool
        var then: (HTTPClientResponse?) -> Void
    }

    unowned let loop: EventLoop
    let endpoint: ServerEndpoint
    let shard: StatsShard
    /// Set for open-loop runs: each request is due on its slot and timed from it.
    var pacer: Pacer?
    /// Tokens mode: the `Authorization` value of every request.
    let authorization: String?
    /// Sends `Accept-Encoding: gzip`, as ``LoadConnection/acceptsGzip``.
    let acceptsGzip: Bool

    private var fd: Int32 = -1
    private var slot = -1
    private var connecting = false
    private var watchingWrites = false
    private var output: [UInt8] = []
    private var written = 0
    private var parser = ResponseParser()
    private var inFlight: InFlight?

    init(loop: EventLoop, endpoint: ServerEndpoint, shard: StatsShard, pacer: Pacer?, authorization: String? = nil,
         acceptsGzip: Bool = false) {
        self.loop = loop
        self.endpoint = endpoint
        self.shard = shard
        self.pacer = pacer
        self.authorization = authorization
        self.acceptsGzip = acceptsGzip
    }

    func takeSlot() -> UInt64 {
        guard var pacer else { return MonotonicClock.now() }
        defer { self.pacer = pacer }
        return pacer.takeSlot()
    }

    func send(_ request: LoadRequest, then: @escaping (HTTPClientResponse?) -> Void) {
        guard loop.control.shouldContinue else { return }
        let start = request.start ?? takeSlot()
        // A slot more than a few microseconds ahead waits on the loop's timer.
        if start > MonotonicClock.now() &+ 20_000 {
            loop.schedule(at: start) { [self] in transmit(request, start: start, then: then) }
        } else {
            transmit(request, start: start, then: then)
        }
    }

    func close() {
        guard fd >= 0 else { return }
        loop.unregister(slot: slot, fd: fd)
        Glibc.close(fd)
        fd = -1
        slot = -1
        connecting = false
        watchingWrites = false
        output.removeAll(keepingCapacity: true)
        written = 0
        parser = ResponseParser()
    }

    /// What epoll reported for this connection's descriptor.
    func handle(events: UInt32) {
        if connecting {
            guard events & (Epoll.writable | Epoll.error | Epoll.hangUp) != 0 else { return }
            let code = RawSocket.pendingError(fd)
            guard code == 0 else { return fail("connect: \(RawSocket.describe(code))") }
            connecting = false
            flush()
            return
        }
        if events & Epoll.writable != 0 {
            flush()
            guard fd >= 0 else { return }
        }
        if events & (Epoll.readable | Epoll.hangUp | Epoll.error) != 0 { receive() }
    }

    private func transmit(_ request: LoadRequest, start: UInt64, then: @escaping (HTTPClientResponse?) -> Void) {
        guard loop.control.shouldContinue else { return }
        inFlight = InFlight(kind: request.kind, accepted: request.accepted, start: start,
                            answersHead: request.method == .head, then: then)
        if fd < 0 {
            guard let opened = RawSocket.startConnect(to: endpoint, nonBlocking: true) else {
                return fail("connect: \(RawSocket.describe(errno))")
            }
            fd = opened
            connecting = true
            watchingWrites = true
            slot = loop.register(self, fd: fd, events: Epoll.readable | Epoll.writable)
        }
        let headers = LoadConnection.headers(request.method, body: request.body, authorization: authorization,
                                             acceptsGzip: acceptsGzip, ifNoneMatch: request.ifNoneMatch)
        RequestSerializer.append(HTTPRequest(method: request.method, target: request.target, headers: headers, body: request.body),
                                 host: endpoint.authority, to: &output)
        if !connecting { flush() }
    }

    private func flush() {
        while written < output.count {
            let count = output.withUnsafeBytes { bytes in
                Glibc.send(fd, bytes.baseAddress! + written, bytes.count - written, Int32(MSG_NOSIGNAL))
            }
            if count > 0 {
                written += count
            } else if count < 0 && errno == EINTR {
                continue
            } else if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                watchWrites(true)
                return
            } else {
                return fail("send: \(RawSocket.describe(errno))")
            }
        }
        output.removeAll(keepingCapacity: true)
        written = 0
        watchWrites(false)
    }

    private func watchWrites(_ watch: Bool) {
        guard watch != watchingWrites, fd >= 0 else { return }
        watchingWrites = watch
        loop.modify(slot: slot, fd: fd, events: Epoll.readable | (watch ? Epoll.writable : 0))
    }

    private func receive() {
        let buffer = loop.readBuffer
        let count = recv(fd, buffer.baseAddress, buffer.count, 0)
        if count > 0 {
            parser.append(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            guard let current = inFlight else {
                // Bytes nobody asked for: the connection is out of step.
                return fail("unexpected bytes between answers")
            }
            do {
                if let response = try parser.next(answersHead: current.answersHead) { complete(response) }
            } catch {
                fail("\(error)")
            }
        } else if count == 0 {
            if inFlight != nil, let response = parser.finishAtEndOfInput() {
                close()
                complete(response)
            } else if inFlight != nil {
                fail("closed by the server")
            } else {
                // A keep-alive connection the server closed between requests: reopen on the next one.
                close()
            }
        } else if errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR {
            fail("recv: \(RawSocket.describe(errno))")
        }
    }

    private func complete(_ response: HTTPClientResponse) {
        guard let current = inFlight else { return }
        inFlight = nil
        LoadConnection.record(response, kind: current.kind, start: current.start, end: MonotonicClock.now(),
                              accepted: current.accepted, shard: shard)
        if response.headers["Connection"]?.caseInsensitiveEquals("close") == true || parser.hasPartialResponse {
            close()
        }
        current.then(LoadConnection.decoded(response, kind: current.kind, shard: shard))
    }

    /// Closes the connection; an outstanding request is counted as a transport
    /// error and answered nil after a pause (a refused connection would otherwise spin the loop).
    private func fail(_ reason: String) {
        close()
        guard let current = inFlight else { return }
        inFlight = nil
        shard.state.withLock { $0.recordError("\(current.kind.name): transport \(reason.prefix(60))") }
        loop.schedule(at: MonotonicClock.now() + 10_000_000) { current.then(nil) }
    }
}
