import Foundation
import Glibc
import HTTPCore
import Histogram
import Synchronization

/// The streams of `run --scenario streams`: non-blocking sockets read by one
/// thread through epoll, each parsed into Server-Sent Event blocks as bytes
/// come. A created message whose `client_id` is one of the writers'
/// (`s<writer>-<n>-<due>`) records its post-to-delivery latency.
///
/// The use of `@unchecked Sendable` is safe for this type because: `open`
/// runs before the reading thread starts and `result` after `stop` made it
/// return, so the stream table and the histogram are only touched by one
/// thread at a time; `stopped` is an `Atomic`.
final class StreamReaders: @unchecked Sendable {
    private struct Stream {
        var buffer: [UInt8] = []
        var headRead = false
        var lastID: Int64 = -1
        var status = 0
    }

    struct Result {
        var deliveries = 0
        var latency = Histogram<UInt64>.latency()
        /// Streams the server closed during the run.
        var endedEarly = 0
        /// Events whose `id` was not above the stream's previous one.
        var outOfOrder = 0
    }

    private let plan: StreamsRun.Plan
    private let versions: [Int64]
    private let epoll: Int32
    private let eventBuffer: UnsafeMutableRawBufferPointer
    private var streams: [Int32: Stream] = [:]
    private var outcome = Result()
    private let stopped = Atomic<Bool>(false)

    init(plan: StreamsRun.Plan, versions: [Int64]) throws {
        self.plan = plan
        self.versions = versions
        do {
            epoll = try Epoll.create()
        } catch {
            throw StreamsFailure("epoll_create1: errno \(error.errno)")
        }
        eventBuffer = .allocate(byteCount: 256 * Epoll.eventStride, alignment: 16)
        Self.raiseOpenFileLimit()
    }

    deinit {
        for descriptor in streams.keys { close(descriptor) }
        close(epoll)
        eventBuffer.deallocate()
    }

    /// Opens every stream and reads their heads; how many answered 200.
    func openAll(progress: Bool) -> Int {
        for index in 0..<plan.streams {
            let conversation = index % plan.conversations
            let target = "/v1/conversations/\(StreamsRun.conversationID(conversation))/events?since=\(versions[conversation])"
            guard let descriptor = connectAndAsk(target, index: index) else { continue }
            streams[descriptor] = Stream()
            try? Epoll.control(epoll, .add, fd: descriptor, events: Epoll.readable, token: UInt64(descriptor))
            if progress && (index + 1) % 1000 == 0 { print("streams: \(index + 1) opened") }
        }
        let deadline = MonotonicClock.now() + 60_000_000_000
        while MonotonicClock.now() < deadline && streams.values.contains(where: { !$0.headRead }) {
            poll(timeoutMilliseconds: 200)
        }
        return streams.values.filter { $0.headRead && $0.status == 200 }.count
    }

    func readUntilStopped() {
        while !stopped.load(ordering: .acquiring) { poll(timeoutMilliseconds: 100) }
    }

    func stop() { stopped.store(true, ordering: .releasing) }

    func result() -> Result { outcome }

    // MARK: - Reading

    private func poll(timeoutMilliseconds: Int32) {
        let count = Epoll.wait(epoll, into: eventBuffer, timeoutMilliseconds: timeoutMilliseconds)
        for index in 0..<count { readAvailable(Int32(truncatingIfNeeded: Epoll.event(at: index, in: eventBuffer).token)) }
    }

    private func readAvailable(_ descriptor: Int32) {
        guard var stream = streams[descriptor] else { return }
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        var ended = false
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count > 0 {
                stream.buffer.append(contentsOf: chunk[0..<count])
                continue
            }
            if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { break }
            if count < 0 && errno == EINTR { continue }
            ended = true
            break
        }
        let arrival = MonotonicClock.now()
        parse(&stream, arrival: arrival)
        if ended {
            if !stopped.load(ordering: .relaxed) && stream.status == 200 { outcome.endedEarly += 1 }
            if !stream.headRead { stream.headRead = true }
            try? Epoll.control(epoll, .delete, fd: descriptor, events: 0, token: 0)
            close(descriptor)
            streams[descriptor] = nil
            return
        }
        streams[descriptor] = stream
    }

    private static let headEnd: [UInt8] = [13, 10, 13, 10]
    private static let blockEnd: [UInt8] = [10, 10]

    private func parse(_ stream: inout Stream, arrival: UInt64) {
        if !stream.headRead {
            guard let end = Self.find(Self.headEnd, in: stream.buffer, from: 0) else { return }
            let statusLine = stream.buffer.prefix(while: { $0 != 13 })
            let parts = String(decoding: statusLine, as: UTF8.self).split(separator: " ")
            stream.status = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
            stream.headRead = true
            stream.buffer.removeFirst(end + 4)
        }
        var start = 0
        while let end = Self.find(Self.blockEnd, in: stream.buffer, from: start) {
            event(stream.buffer[start..<end], stream: &stream, arrival: arrival)
            start = end + 2
        }
        if start > 0 { stream.buffer.removeFirst(start) }
    }

    /// One block: its `id` must ascend; a writer's `client_id` gives a latency.
    private func event(_ block: ArraySlice<UInt8>, stream: inout Stream, arrival: UInt64) {
        let text = String(decoding: block, as: UTF8.self)
        guard !text.hasPrefix(":") else { return }
        var isCreated = false
        for line in text.split(separator: "\n") {
            if line.hasPrefix("id: "), let id = Int64(line.dropFirst(4)) {
                if id <= stream.lastID { outcome.outOfOrder += 1 }
                stream.lastID = id
            } else if line == "event: created" {
                isCreated = true
            } else if isCreated, line.hasPrefix("data: "), let range = line.range(of: #""client_id":"s"#) {
                let rest = line[range.upperBound...]
                guard let quote = rest.firstIndex(of: "\""), let dash = rest[..<quote].lastIndex(of: "-"),
                      let due = UInt64(rest[rest.index(after: dash)..<quote]) else { continue }
                outcome.deliveries += 1
                outcome.latency.recordNanoseconds(arrival > due ? arrival - due : 0)
            }
        }
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        var index = start
        while index + needle.count <= haystack.count {
            if haystack[index] == needle[0] && haystack[index + 1] == needle[1]
                && (needle.count == 2 || (haystack[index + 2] == needle[2] && haystack[index + 3] == needle[3])) {
                return index
            }
            index += 1
        }
        return nil
    }

    // MARK: - Connecting

    /// A blocking connect (loopback answers at once), the request, then
    /// non-blocking. Over IPv4 each stream comes from its own loopback
    /// address (127.21.x.y: all of 127/8 reaches the loopback interface on
    /// Linux), so the server's per-client allowances (parked polls,
    /// connections per peer) count each stream as the app user it stands
    /// for, not all of them as one client.
    private func connectAndAsk(_ target: String, index: Int) -> Int32? {
        let host = plan.endpoint.host == "localhost" ? "127.0.0.1" : plan.endpoint.host
        let isIPv6 = host.contains(":")
        let descriptor = socket(isIPv6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        var connected: Int32 = -1
        if isIPv6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = in_port_t(UInt16(plan.endpoint.port).bigEndian)
            inet_pton(AF_INET6, host, &address.sin6_addr)
            connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
        } else {
            var source = sockaddr_in()
            source.sin_family = sa_family_t(AF_INET)
            inet_pton(AF_INET, "127.21.\(index / 250 % 256).\(index % 250 + 1)", &source.sin_addr)
            _ = withUnsafePointer(to: &source) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(plan.endpoint.port).bigEndian)
            inet_pton(AF_INET, host, &address.sin_addr)
            connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }
        var request = "GET \(target) HTTP/1.1\r\nHost: \(plan.endpoint.host):\(plan.endpoint.port)\r\nAccept: text/event-stream\r\n"
        if let authorization = plan.authorization { request += "Authorization: \(authorization)\r\n" }
        request += "\r\n"
        let bytes = Array(request.utf8)
        guard connected == 0,
              bytes.withUnsafeBytes({ send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == bytes.count else {
            close(descriptor)
            return nil
        }
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        return descriptor
    }

    /// Thousands of streams need thousands of descriptors: the soft limit
    /// goes up to the hard one.
    private static func raiseOpenFileLimit() {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = limit.rlim_max
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }
}
