import Dispatch
import Foundation
import HTTPCore
import HistoryTestSupport
import Synchronization
import Testing

/// Several `history-server` processes on one PostgreSQL database: every
/// guarantee of the contract holds across them (docs/API.md, "Several
/// instances on PostgreSQL").
@Suite("Several instances on PostgreSQL", .postgresCluster)
struct MultiInstanceProcessTests {
    private static func startInstances(_ count: Int, database: String) throws -> [ServerProcess] {
        try (0..<count).map { _ in
            try ServerProcess(arguments: ["--port", "0", "--database", database, "--access-log", "off"])
        }
    }

    private static let json: HTTPHeaders = ["Content-Type": "application/json"]

    private static func body(_ object: [String: Any]) -> [UInt8] {
        Array(try! JSONSerialization.data(withJSONObject: object))
    }

    private static func object(_ response: HTTPClientResponse) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:]
    }

    private static func create(_ conversation: String, on server: ServerProcess) throws {
        let client = try server.connect()
        defer { client.close() }
        let response = try client.request(HTTPRequest(method: .post, target: "/v1/conversations", headers: json,
                                                      body: body(["id": conversation])))
        #expect(response.status == 201, "\(response.bodyText)")
    }

    private static func post(_ client: HTTPClientConnection, to conversation: String, sender: String, text: String,
                             clientID: String? = nil) throws -> HTTPClientResponse {
        var fields: [String: Any] = ["sender": sender, "body": text]
        if let clientID { fields["client_id"] = clientID }
        return try client.request(HTTPRequest(method: .post, target: "/v1/conversations/\(conversation)/messages",
                                              headers: json, body: body(fields)))
    }

    /// True once the instance reports a parked long-poll.
    private static func waitUntilParked(_ server: ServerProcess) throws -> Bool {
        let metrics = try server.connect()
        defer { metrics.close() }
        return eventually {
            let text = (try? metrics.request(HTTPRequest(method: .get, target: "/metrics")).bodyText) ?? ""
            return text.split(separator: "\n").contains { $0.hasPrefix("history_parked_long_polls ") && !$0.hasSuffix(" 0") }
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func aPostThroughOneInstanceWakesALongPollParkedOnAnother() async throws {
        try await withTestDatabase { database in
            let servers = try Self.startInstances(3, database: database)
            defer { servers.forEach { $0.stop() } }
            try Self.create("room", on: servers[0])
            let poller = try servers[0].connect(timeout: .seconds(70))
            defer { poller.close() }
            try poller.send(HTTPRequest(method: .get, target: "/v1/conversations/room/events?since=0&wait=50"))
            // Posted before the poll parked, the message would answer it at
            // once, which proves less: the /metrics gauge says when it parked.
            #expect(try Self.waitUntilParked(servers[0]))
            let start = ContinuousClock.now
            let poster = try servers[2].connect()
            defer { poster.close() }
            let posted = try Self.post(poster, to: "room", sender: "ana", text: "through C")
            #expect(posted.status == 201)
            let answer = try poller.receive()
            #expect(answer.status == 200)
            let events = Self.object(answer)["events"] as? [[String: Any]] ?? []
            #expect(events.count == 1)
            #expect((events.first?["message"] as? [String: Any])?["body"] as? String == "through C")
            // Woken, not timed out (the wait was 50 s).
            #expect(ContinuousClock.now - start < .seconds(40))
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func aClientIDRetriedOnAnotherInstanceAnswersTheOriginal() async throws {
        try await withTestDatabase { database in
            let servers = try Self.startInstances(3, database: database)
            defer { servers.forEach { $0.stop() } }
            try Self.create("room", on: servers[1])
            let first = try servers[0].connect()
            defer { first.close() }
            let original = try Self.post(first, to: "room", sender: "ana", text: "once", clientID: "retry-1")
            #expect(original.status == 201)
            for server in servers[1...] {
                let client = try server.connect()
                defer { client.close() }
                let retry = try Self.post(client, to: "room", sender: "ana", text: "once", clientID: "retry-1")
                #expect(retry.status == 200, "\(retry.bodyText)")
                #expect(retry.bodyText == original.bodyText)
                let conflict = try Self.post(client, to: "room", sender: "ana", text: "twice", clientID: "retry-1")
                #expect(conflict.status == 409)
                #expect(conflict.bodyText.contains("client_id_conflict"))
            }
            let reader = try servers[2].connect()
            defer { reader.close() }
            let conversation = Self.object(try reader.request(HTTPRequest(method: .get, target: "/v1/conversations/room")))
            #expect(conversation["message_count"] as? Int == 1)
        }
    }

    /// U+0000 and friends, as JSON escapes, through the HTTP API on
    /// PostgreSQL: stored and answered as they came, on either instance
    /// (migrations/postgres/0003_text_bytes.sql), where `text` would fail
    /// the append with a 500.
    @Test(.timeLimit(.minutes(2)))
    func textWithNULRoundTripsThroughTwoInstances() async throws {
        try await withTestDatabase { database in
            let servers = try Self.startInstances(2, database: database)
            defer { servers.forEach { $0.stop() } }
            let writer = try servers[0].connect()
            defer { writer.close() }
            let reader = try servers[1].connect()
            defer { reader.close() }
            let created = try writer.request(HTTPRequest(method: .post, target: "/v1/conversations", headers: Self.json,
                                                         body: Array(#"{"id": "room", "title": "t\u0000itle"}"#.utf8)))
            #expect(created.status == 201, "\(created.bodyText)")
            let message = Array(#"{"sender": "a\u0000na", "body": "x\u0000y \ud83d\ude00 \uffff", "client_id": "k\u0000"}"#.utf8)
            let posted = try writer.request(HTTPRequest(method: .post, target: "/v1/conversations/room/messages",
                                                        headers: Self.json, body: message))
            #expect(posted.status == 201, "\(posted.bodyText)")
            let fields = Self.object(posted)
            #expect((fields["body"] as? String).map { Array($0.utf8) } == Array("x\u{0}y 😀 \u{FFFF}".utf8))
            #expect((fields["sender"] as? String).map { Array($0.utf8) } == Array("a\u{0}na".utf8))
            let retry = try reader.request(HTTPRequest(method: .post, target: "/v1/conversations/room/messages",
                                                       headers: Self.json, body: message))
            #expect(retry.status == 200 && retry.bodyText == posted.bodyText, "\(retry.bodyText)")
            let page = Self.object(try reader.request(HTTPRequest(method: .get, target: "/v1/conversations/room/messages")))
            let read = (page["messages"] as? [[String: Any]])?.first ?? [:]
            #expect((read["body"] as? String).map { Array($0.utf8) } == Array("x\u{0}y 😀 \u{FFFF}".utf8))
            #expect((read["client_id"] as? String).map { Array($0.utf8) } == Array("k\u{0}".utf8))
            let conversation = Self.object(try reader.request(HTTPRequest(method: .get, target: "/v1/conversations/room")))
            #expect((conversation["title"] as? String).map { Array($0.utf8) } == Array("t\u{0}itle".utf8))
        }
    }

    /// Posters on all three instances, and a walker on each that follows the
    /// conversation with `after=` pages: ids strictly increase, no walker
    /// ever sees an id below one it saw, and at the end every walker saw
    /// exactly the ids that were answered 201, with nothing between them.
    @Test(.timeLimit(.minutes(3)))
    func postersOnEveryInstanceAndWalkersSeeIDsInCommitOrder() async throws {
        try await withTestDatabase { database in
            let servers = try Self.startInstances(3, database: database)
            defer { servers.forEach { $0.stop() } }
            try Self.create("busy", on: servers[0])
            let answered = Mutex<Set<Int>>([])
            let failures = Mutex<[String]>([])
            let postersDone = Atomic<Int>(0)
            let postersPerInstance = 2
            let postsEach = 60
            let group = DispatchGroup()
            for (index, server) in servers.enumerated() {
                for poster in 0..<postersPerInstance {
                    group.enter()
                    Thread {
                        defer { postersDone.add(1, ordering: .relaxed); group.leave() }
                        do {
                            let client = try server.connect(timeout: .seconds(60))
                            defer { client.close() }
                            for number in 0..<postsEach {
                                let response = try Self.post(client, to: "busy", sender: "p\(index)-\(poster)", text: "\(number)")
                                guard response.status == 201, let id = Self.object(response)["id"] as? Int else {
                                    failures.withLock { $0.append("post: \(response.status) \(response.bodyText)") }
                                    continue
                                }
                                _ = answered.withLock { $0.insert(id) }
                            }
                        } catch {
                            failures.withLock { $0.append("poster: \(error)") }
                        }
                    }.start()
                }
            }
            let walked = Mutex<[[Int]]>(Array(repeating: [], count: servers.count))
            let posterCount = servers.count * postersPerInstance
            for (index, server) in servers.enumerated() {
                group.enter()
                Thread {
                    defer { group.leave() }
                    do {
                        let client = try server.connect(timeout: .seconds(60))
                        defer { client.close() }
                        var last = 0
                        var seen: [Int] = []
                        // One more walk after the posters stopped, to read the end.
                        var finalPass = false
                        while true {
                            let finished = postersDone.load(ordering: .relaxed) == posterCount
                            let response = try client.request(HTTPRequest(
                                method: .get, target: "/v1/conversations/busy/messages?after=\(last)&limit=50"))
                            let messages = Self.object(response)["messages"] as? [[String: Any]] ?? []
                            for id in messages.compactMap({ $0["id"] as? Int }) {
                                if id <= last { failures.withLock { $0.append("walker \(index): \(id) after \(last)") } }
                                last = max(last, id)
                                seen.append(id)
                            }
                            if messages.isEmpty {
                                if finalPass { break }
                                if finished { finalPass = true }
                            }
                        }
                        walked.withLock { $0[index] = seen }
                    } catch {
                        failures.withLock { $0.append("walker \(index): \(error)") }
                    }
                }.start()
            }
            await withCheckedContinuation { continuation in
                group.notify(queue: .global()) { continuation.resume() }
            }
            #expect(failures.withLock { $0 } == [])
            let expected = answered.withLock { $0 }.sorted()
            #expect(expected.count == servers.count * postersPerInstance * postsEach)
            for seen in walked.withLock({ $0 }) {
                #expect(seen == expected)
            }
            // The newest page through every instance is the same.
            let pages = try servers.map { server -> String in
                let client = try server.connect()
                defer { client.close() }
                return try client.request(HTTPRequest(method: .get, target: "/v1/conversations/busy/messages?limit=200")).bodyText
            }
            #expect(Set(pages).count == 1)
        }
    }

    /// `kill -9` of one instance while all three take posts: every post
    /// answered 2xx by any instance is stored, once.
    @Test(.timeLimit(.minutes(3)))
    func killingOneInstanceMidLoadLosesNoAnsweredWrite() async throws {
        try await withTestDatabase { database in
            let servers = try Self.startInstances(3, database: database)
            defer { servers.forEach { $0.stop() } }
            try Self.create("load", on: servers[0])
            let answered = Mutex<[Int: String]>([:])
            let group = DispatchGroup()
            let posts = 80
            for (index, server) in servers.enumerated() {
                for poster in 0..<2 {
                    group.enter()
                    Thread {
                        defer { group.leave() }
                        guard let client = try? server.connect(timeout: .seconds(60)) else { return }
                        defer { client.close() }
                        for number in 0..<posts {
                            let text = "i\(index)-p\(poster)-\(number)"
                            guard let response = try? Self.post(client, to: "load", sender: "s\(index)", text: text,
                                                               clientID: text) else { return }
                            if (200..<300).contains(response.status), let id = Self.object(response)["id"] as? Int {
                                answered.withLock { $0[id] = text }
                            }
                        }
                    }.start()
                }
            }
            #expect(await eventually { answered.withLock { $0.count } >= 40 })
            servers[1].send(signal: SIGKILL)
            #expect(servers[1].waitForExit(timeout: .seconds(10)) != nil)
            await withCheckedContinuation { continuation in
                group.notify(queue: .global()) { continuation.resume() }
            }
            let stored = answered.withLock { $0 }
            let reader = try servers[0].connect()
            defer { reader.close() }
            var found: [Int: String] = [:]
            var after = 0
            while true {
                let page = Self.object(try reader.request(HTTPRequest(
                    method: .get, target: "/v1/conversations/load/messages?after=\(after)&limit=200")))
                let messages = page["messages"] as? [[String: Any]] ?? []
                if messages.isEmpty { break }
                for message in messages {
                    let id = message["id"] as? Int ?? 0
                    found[id] = message["body"] as? String
                    after = max(after, id)
                }
            }
            for (id, text) in stored {
                #expect(found[id] == text, "answered \(id) \(text) is missing")
            }
            // Each body once: a client_id never stored twice.
            #expect(Set(found.values).count == found.count)
        }
    }

    /// The database stopped: `/healthz` and requests answer 503
    /// `store_unavailable` (quickly, not hanging); restarted: 200 again,
    /// with no restart of the instances, and a long-poll woken again.
    @Test(.timeLimit(.minutes(3)))
    func whileTheDatabaseIsDownRequestsAnswer503AndRecoverAfter() async throws {
        // A cluster of its own: stopping the suite's would fail other tests.
        try await withPostgresCluster { cluster in
            let database = try cluster.createDatabase()
            let servers = try Self.startInstances(2, database: database)
            defer { servers.forEach { $0.stop() } }
            try Self.create("room", on: servers[0])
            let client = try servers[1].connect(timeout: .seconds(30))
            defer { client.close() }
            #expect(try client.request(HTTPRequest(method: .get, target: "/healthz")).status == 200)

            try cluster.stop()
            let start = ContinuousClock.now
            let health = try client.request(HTTPRequest(method: .get, target: "/healthz"))
            #expect(health.status == 503)
            #expect(health.bodyText.contains("store_unavailable"), "\(health.bodyText)")
            let page = try client.request(HTTPRequest(method: .get, target: "/v1/conversations/room/messages"))
            #expect(page.status == 503)
            #expect(page.bodyText.contains("store_unavailable"), "\(page.bodyText)")
            let post = try Self.post(client, to: "room", sender: "ana", text: "while down")
            #expect(post.status == 503, "\(post.bodyText)")
            #expect(post.bodyText.contains("store_unavailable"), "\(post.bodyText)")
            #expect(ContinuousClock.now - start < .seconds(20))

            try cluster.start()
            #expect(await eventually {
                (try? client.request(HTTPRequest(method: .get, target: "/healthz")).status) == 200
            })
            #expect(try Self.post(client, to: "room", sender: "ana", text: "back").status == 201)
            // Instance 0 hears commits again (its listener reconnected).
            let poller = try servers[0].connect(timeout: .seconds(70))
            defer { poller.close() }
            let version = Self.object(try poller.request(HTTPRequest(method: .get, target: "/v1/conversations/room")))["version"] as? Int ?? 0
            try poller.send(HTTPRequest(method: .get, target: "/v1/conversations/room/events?since=\(version)&wait=50"))
            #expect(try Self.waitUntilParked(servers[0]))
            let waking = ContinuousClock.now
            #expect(try Self.post(client, to: "room", sender: "bo", text: "wake").status == 201)
            let answer = try poller.receive()
            #expect(answer.status == 200)
            #expect(answer.bodyText.contains("\"wake\""))
            #expect(ContinuousClock.now - waking < .seconds(40))
        }
    }
}
