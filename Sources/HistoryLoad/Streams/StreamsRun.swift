import Foundation
import Glibc
import HTTPCore
import Histogram

/// `run --scenario streams`: `--clients` Server-Sent Event streams held open
/// on `--live-conversations` conversations (`streams-0000`...), while
/// `--writers` post at `--rate` posts a second in all. Reports what
/// docs/API.md's "Live" asks of streams: post-to-delivery latency (each
/// post's `client_id` carries its send time on the monotonic clock; every
/// stream of its conversation records its arrival) and the server's
/// resident memory per idle stream (read from /proc, so only for a server
/// on this machine).
///
/// One thread reads every stream through epoll; the writers are blocking
/// keep-alive connections on threads of their own. Open mode, or tokens
/// mode with an admin token minted from the signing key given, since it
/// creates its conversations.
struct StreamsRun {
    struct Plan {
        var endpoint: ServerEndpoint
        var streams: Int
        var conversations: Int
        var writers: Int
        var postsPerSecond: Double
        var duration: Duration
        /// The `Authorization` value of every request (an admin token), if any.
        var authorization: String?
        var progress: Bool
    }

    let plan: Plan

    func execute() throws -> StreamsReport {
        let pid = ServerMemory.pid(listeningOn: plan.endpoint.port)
        let setup = try HTTPClientConnection(host: plan.endpoint.host, port: plan.endpoint.port, timeout: .seconds(30))
        var versions: [Int64] = []
        for index in 0..<plan.conversations {
            versions.append(try Self.prepare(conversation: Self.conversationID(index), on: setup, authorization: plan.authorization))
        }
        setup.close()
        // Let the server settle before the baseline.
        Thread.sleep(forTimeInterval: 1)
        let baseline = pid.flatMap(ServerMemory.residentBytes)
        let readers = try StreamReaders(plan: plan, versions: versions)
        let opened = readers.openAll(progress: plan.progress)
        Thread.sleep(forTimeInterval: 2)
        let idle = pid.flatMap(ServerMemory.residentBytes)
        let readerThread = Thread { readers.readUntilStopped() }
        readerThread.start()
        let deadline = MonotonicClock.now() + UInt64(plan.duration.components.seconds) * 1_000_000_000
            + UInt64(plan.duration.components.attoseconds / 1_000_000_000)
        let posted = Counter()
        let failedPosts = Counter()
        let group = DispatchGroup()
        let interval = Double(plan.writers) / plan.postsPerSecond
        for writer in 0..<plan.writers {
            group.enter()
            Thread {
                defer { group.leave() }
                postLoop(writer: writer, interval: interval, deadline: deadline, posted: posted, failed: failedPosts)
            }.start()
        }
        group.wait()
        // The last posts' deliveries.
        Thread.sleep(forTimeInterval: 1)
        readers.stop()
        let result = readers.result()
        var memoryPerStream: Double?
        if let baseline, let idle, opened > 0 {
            memoryPerStream = (Double(idle) - Double(baseline)) / Double(opened)
        }
        return StreamsReport(plan: plan, opened: opened, refused: plan.streams - opened, posted: posted.value,
                             failedPosts: failedPosts.value, deliveries: result.deliveries, latency: result.latency,
                             endedEarly: result.endedEarly, outOfOrder: result.outOfOrder,
                             serverPID: pid, baselineRSS: baseline, idleRSS: idle, rssPerIdleStream: memoryPerStream)
    }

    static func conversationID(_ index: Int) -> String {
        "streams-" + String(repeating: "0", count: max(0, 4 - String(index).count)) + String(index)
    }

    /// Creates the conversation unless it exists; its current version.
    static func prepare(conversation: String, on connection: HTTPClientConnection, authorization: String?) throws -> Int64 {
        var headers: HTTPHeaders = ["Content-Type": "application/json"]
        if let authorization { headers.add(name: "Authorization", value: authorization) }
        let body = Array(#"{"id":"\#(conversation)"}"#.utf8)
        headers.add(name: "Content-Length", value: "\(body.count)")
        let created = try connection.request(HTTPRequest(method: .post, target: "/v1/conversations", headers: headers, body: body))
        guard created.status == 201 || created.status == 409 else {
            throw StreamsFailure("creating \(conversation): \(created.status) \(String(decoding: created.body, as: UTF8.self))")
        }
        var get: HTTPHeaders = [:]
        if let authorization { get.add(name: "Authorization", value: authorization) }
        let read = try connection.request(HTTPRequest(method: .get, target: "/v1/conversations/\(conversation)", headers: get))
        guard read.status == 200,
              let object = try? JSONSerialization.jsonObject(with: Data(read.body)) as? [String: Any],
              let version = (object["version"] as? NSNumber)?.int64Value else {
            throw StreamsFailure("reading \(conversation): \(read.status)")
        }
        return version
    }

    /// Posts on a fixed schedule (open loop: a slow answer delays no later
    /// post's due time, and latency counts from the due time).
    private func postLoop(writer: Int, interval: Double, deadline: UInt64, posted: Counter, failed: Counter) {
        guard let connection = try? HTTPClientConnection(host: plan.endpoint.host, port: plan.endpoint.port,
                                                         timeout: .seconds(30)) else {
            failed.add(1)
            return
        }
        defer { connection.close() }
        let step = UInt64(interval * 1_000_000_000)
        var due = MonotonicClock.now() + UInt64(Double(writer) / Double(plan.writers) * Double(step))
        var sequence = 0
        while due < deadline {
            MonotonicClock.sleep(until: due)
            let conversation = Self.conversationID((writer + sequence * plan.writers) % plan.conversations)
            sequence += 1
            let body = Array(#"{"sender":"streams","body":"stream load","client_id":"s\#(writer)-\#(sequence)-\#(due)"}"#.utf8)
            var headers: HTTPHeaders = ["Content-Type": "application/json", "Content-Length": "\(body.count)"]
            if let authorization = plan.authorization { headers.add(name: "Authorization", value: authorization) }
            let answer = try? connection.request(HTTPRequest(method: .post, target: "/v1/conversations/\(conversation)/messages",
                                                             headers: headers, body: body))
            if answer?.status == 201 { posted.add(1) } else { failed.add(1) }
            due += step
        }
    }
}

struct StreamsFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A count several threads add to.
final class Counter: @unchecked Sendable {
    // @unchecked: every access holds `lock`.
    private let lock = NSLock()
    private var count = 0

    func add(_ value: Int) {
        lock.lock()
        count += value
        lock.unlock()
    }

    var value: Int {
        lock.lock()
        defer { lock.unlock() }
        return count
    }
}
