import Foundation
import Glibc

/// One Server-Sent Events stream over a real loopback socket, read by hand
/// (docs/API.md, "Live"): the head, then each event as the server wrote
/// it, comments (heartbeats) included. Blocking, for one test thread.
///
/// ```swift
/// let stream = try EventStreamClient(port: server.port, target: "/v1/conversations/c/events?since=0")
/// #expect(try stream.head().status == 200)
/// let event = try stream.next()  // id, event, data
/// ```
public final class EventStreamClient {
    /// One block of the stream: an event, or a comment line (`:`).
    public struct Event: Sendable, Equatable, CustomStringConvertible {
        public var id: String?
        public var type: String?
        public var data: String?
        /// True for a block of comment lines only (a heartbeat).
        public var isComment: Bool

        /// `data` as a JSON object.
        public var json: [String: Any] {
            guard let data, let object = try? JSONSerialization.jsonObject(with: Data(data.utf8)) as? [String: Any] else {
                return [:]
            }
            return object
        }

        public var description: String {
            isComment ? ":" : "id=\(id ?? "-") event=\(type ?? "-") data=\(data ?? "")"
        }
    }

    public struct Head: Sendable {
        public var status: Int
        /// Lowercased names.
        public var headers: [String: String]
        /// The body when the answer was not a stream (an error's JSON).
        public var body: String
    }

    public enum Failure: Error, CustomStringConvertible {
        case connect(Int32)
        case timeout
        case closed
        case malformed(String)

        public var description: String {
            switch self {
            case .connect(let code): "connect failed: errno \(code)"
            case .timeout: "no bytes in time"
            case .closed: "the server closed the stream"
            case .malformed(let text): "malformed: \(text)"
            }
        }
    }

    private let descriptor: Int32
    private var buffer: [UInt8] = []
    private var closedByPeer = false

    /// Connects and sends `GET target` with `Accept: text/event-stream` and
    /// `headers`. `receiveBuffer`: a small one (set before connecting) makes
    /// a client that does not read fill up fast.
    public init(host: String = "127.0.0.1", port: Int, target: String, headers: [(String, String)] = [],
                method: String = "GET", version: String = "HTTP/1.1", accept: String? = "text/event-stream",
                receiveBuffer: Int32? = nil, timeout: Duration = .seconds(10)) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw Failure.connect(errno) }
        if var size = receiveBuffer {
            setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        let (seconds, attoseconds) = timeout.components
        var value = timeval(tv_sec: Int(seconds), tv_usec: Int(attoseconds / 1_000_000_000_000))
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, host, &address.sin_addr)
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            let code = errno
            Glibc.close(descriptor)
            throw Failure.connect(code)
        }
        var request = "\(method) \(target) \(version)\r\nHost: \(host):\(port)\r\n"
        if let accept { request += "Accept: \(accept)\r\n" }
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        request += "\r\n"
        let bytes = Array(request.utf8)
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else {
                Glibc.close(descriptor)
                throw Failure.connect(errno)
            }
            offset += sent
        }
    }

    deinit { Glibc.close(descriptor) }

    /// Reads the status line and headers. A non-stream answer (an error)
    /// is read whole, by its `Content-Length`.
    public func head() throws -> Head {
        let end = try readUntil([13, 10, 13, 10])
        let text = String(decoding: buffer[..<end], as: UTF8.self)
        buffer.removeFirst(end + 4)
        var lines = text.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { throw Failure.malformed(text) }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        var body = ""
        if let length = headers["content-length"].flatMap(Int.init), length > 0 {
            while buffer.count < length {
                guard try readSome() else { break }
            }
            body = String(decoding: buffer.prefix(length), as: UTF8.self)
            buffer.removeFirst(min(length, buffer.count))
        }
        return Head(status: status, headers: headers, body: body)
    }

    /// The next block (event or comment); throws `.closed` when the server
    /// ended the stream, `.timeout` when nothing came in the socket's timeout.
    public func next() throws -> Event {
        let end = try readUntil([10, 10])
        let text = String(decoding: buffer[..<end], as: UTF8.self)
        buffer.removeFirst(end + 2)
        var event = Event(id: nil, type: nil, data: nil, isComment: true)
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix(":") { continue }
            event.isComment = false
            guard let colon = line.firstIndex(of: ":") else { continue }
            var value = line[line.index(after: colon)...]
            if value.hasPrefix(" ") { value = value.dropFirst() }
            switch line[..<colon] {
            case "id": event.id = String(value)
            case "event": event.type = String(value)
            case "data": event.data = (event.data.map { $0 + "\n" } ?? "") + value
            default: break
            }
        }
        return event
    }

    /// The next event that is not a comment.
    public func nextEvent() throws -> Event {
        while true {
            let event = try next()
            if !event.isComment { return event }
        }
    }

    /// True when the server closes within `within` (bytes meanwhile are kept).
    public func isClosed(within: Duration) -> Bool {
        let deadline = ContinuousClock.now + within
        while ContinuousClock.now < deadline {
            if closedByPeer { return true }
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(max(1, min(1000, (deadline - ContinuousClock.now).components.seconds * 1000 + 1)))
            guard poll(&poller, 1, milliseconds) > 0 else { continue }
            do {
                if try !readSome() { return true }
            } catch {
                return true
            }
        }
        return closedByPeer
    }

    public func close() {
        shutdown(descriptor, Int32(SHUT_RDWR))
    }

    private func readUntil(_ separator: [UInt8]) throws -> Int {
        var searchFrom = 0
        while true {
            if buffer.count >= separator.count {
                var index = searchFrom
                while index + separator.count <= buffer.count {
                    if buffer[index] == separator[0] && Array(buffer[index..<(index + separator.count)]) == separator {
                        return index
                    }
                    index += 1
                }
                searchFrom = max(0, buffer.count - separator.count + 1)
            }
            guard try readSome() else { throw Failure.closed }
        }
    }

    /// One `recv`; false at the end of input.
    private func readSome() throws -> Bool {
        if closedByPeer { return false }
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        if count > 0 {
            buffer.append(contentsOf: chunk[0..<count])
            return true
        }
        if count == 0 || errno == ECONNRESET {
            closedByPeer = true
            return false
        }
        if errno == EAGAIN || errno == EWOULDBLOCK { throw Failure.timeout }
        throw Failure.malformed("recv errno \(errno)")
    }
}

@available(*, unavailable)
extension EventStreamClient: Sendable {}
