import Glibc

/// A blocking keep-alive HTTP/1.1 client connection, for tests and the load
/// tool: one thread uses it, so it is not `Sendable`. Several `send` calls
/// followed by as many `receive` calls pipeline requests.
///
/// ```swift
/// let client = try HTTPClientConnection(port: server.port)
/// defer { client.close() }
/// let response = try client.request(HTTPRequest(method: .get, target: "/healthz"))
/// ```
///
/// Buffers are kept between requests, so a request costs one `send` and
/// (for a response that fits the receive buffer) one `recv`.
public final class HTTPClientConnection {
    public let host: String
    public let port: Int
    private let socket: Socket
    private let timeout: Duration
    private var parser = ResponseParser()
    private var outgoing: [UInt8] = []
    private let receiveBuffer: UnsafeMutableRawBufferPointer
    /// For each request sent and not yet answered: was it HEAD (no body)?
    private var awaitingHead: [Bool] = []
    private var awaitingIndex = 0
    private var hostHeader: String

    /// Connects (an IP literal, `localhost`, or a name looked up with getaddrinfo).
    /// - Parameter timeout: connect, every send and every wait for response bytes give up after this.
    public init(host: String = "127.0.0.1", port: Int, timeout: Duration = .seconds(10)) throws {
        self.host = host
        self.port = port
        self.timeout = timeout
        let addresses = try Self.resolve(host: host, port: port)
        var lastError = HTTPClientError.unknownHost(host)
        var connected: Socket? = nil
        for address in addresses {
            do throws(SocketError) {
                connected = try Socket.connected(to: address, timeout: timeout)
                break
            } catch {
                lastError = .socket(error)
            }
        }
        guard let connected else { throw lastError }
        do throws(SocketError) {
            try connected.setTimeouts(timeout)
        } catch {
            connected.close()
            throw HTTPClientError.socket(error)
        }
        socket = connected
        receiveBuffer = .allocate(byteCount: 64 * 1024, alignment: 16)
        hostHeader = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    deinit {
        socket.close()
        receiveBuffer.deallocate()
    }

    private static func resolve(host: String, port: Int) throws(HTTPClientError) -> [SocketAddress] {
        if let address = SocketAddress(host: host, port: port) { return [address] }
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>? = nil
        guard getaddrinfo(host, String(port), &hints, &list) == 0, let list else { throw .unknownHost(host) }
        defer { freeaddrinfo(list) }
        var addresses: [SocketAddress] = []
        var entry: UnsafeMutablePointer<addrinfo>? = list
        while let current = entry {
            if let pointer = current.pointee.ai_addr, let address = SocketAddress(storage: pointer) {
                addresses.append(address)
            }
            entry = current.pointee.ai_next
        }
        guard !addresses.isEmpty else { throw .unknownHost(host) }
        return addresses
    }

    // MARK: - Sending

    /// Writes the request (adding `Host` and `Content-Length` when missing).
    public func send(_ request: HTTPRequest) throws {
        outgoing.removeAll(keepingCapacity: true)
        RequestSerializer.append(request, host: hostHeader, to: &outgoing)
        try writeAll(outgoing)
        awaitingHead.append(request.method == .head)
    }

    /// Writes arbitrary bytes, for fault tests; a response read afterwards is
    /// taken to answer a request other than HEAD.
    public func sendRaw(_ bytes: [UInt8]) throws {
        try writeAll(bytes)
    }

    private func writeAll(_ bytes: [UInt8]) throws(HTTPClientError) {
        let failure: HTTPClientError? = bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                do throws(SocketError) {
                    guard let written = try socket.send(UnsafeRawBufferPointer(rebasing: buffer[offset...])) else {
                        return .timeout
                    }
                    offset += written
                } catch {
                    return .socket(error)
                }
            }
            return nil
        }
        if let failure { throw failure }
    }

    // MARK: - Receiving

    /// Reads one response: framed by Content-Length, chunked, or the
    /// connection closing. An interim 1xx (100 Continue) is returned as a
    /// response of its own, the final one follows on the next call.
    public func receive() throws -> HTTPClientResponse {
        let answersHead = awaitingIndex < awaitingHead.count ? awaitingHead[awaitingIndex] : false
        while true {
            if let response = try parser.next(answersHead: answersHead) {
                if response.status >= 200 || response.status == 101 { popAwaiting() }
                return response
            }
            let count = try readSome()
            if count == 0 {
                if let response = parser.finishAtEndOfInput() {
                    popAwaiting()
                    return response
                }
                throw HTTPClientError.connectionClosed
            }
        }
    }

    private func popAwaiting() {
        guard awaitingIndex < awaitingHead.count else { return }
        awaitingIndex += 1
        if awaitingIndex == awaitingHead.count {
            awaitingHead.removeAll(keepingCapacity: true)
            awaitingIndex = 0
        }
    }

    /// One `recv` into the parser; 0 at end of input.
    private func readSome() throws(HTTPClientError) -> Int {
        let count: Int?
        do throws(SocketError) {
            count = try socket.receive(into: receiveBuffer)
        } catch {
            if error.errno == ECONNRESET { return 0 }
            throw .socket(error)
        }
        guard let count else { throw .timeout }
        if count > 0 { parser.append(UnsafeRawBufferPointer(rebasing: receiveBuffer[0..<count])) }
        return count
    }

    /// Sends the request and reads its response.
    public func request(_ request: HTTPRequest) throws -> HTTPClientResponse {
        try send(request)
        return try receive()
    }

    /// True when the peer closes (end of input, or a reset) within `within`;
    /// bytes arriving meanwhile are kept for `receive`.
    public func receiveIsClosed(within: Duration) -> Bool {
        let deadline = ContinuousClock.now + within
        while true {
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else { return false }
            guard let ready = try? socket.poll(events: Int16(POLLIN), timeout: remaining), ready else {
                return false
            }
            do {
                if try readSome() == 0 { return true }
            } catch {
                if case .timeout = error { continue }
                return true
            }
        }
    }

    /// Half-closes: the server reads end of input, and responses can still
    /// be received (for truncated-request tests).
    public func finishSending() {
        socket.shutdownOutput()
    }

    /// Closes the socket; later calls do nothing.
    public func close() {
        socket.close()
    }
}

@available(*, unavailable)
extension HTTPClientConnection: Sendable {}
