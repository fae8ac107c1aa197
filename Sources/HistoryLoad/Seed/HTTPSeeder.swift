import Foundation
import HTTPCore
import Synchronization
import ToolSupport

/// Fills a server over HTTP: creates the conversations, then appends their
/// messages from several keep-alive connections in parallel, pipelining a
/// few posts per connection, with replies, edits and deletes mixed in.
/// A rate-limited server's 429s are waited out (`RateLimitedExchange`).
enum HTTPSeeder {
    struct Outcome: Sendable {
        var conversationsCreated = 0
        var conversationsExisting = 0
        var messages = 0
        var replies = 0
        var edits = 0
        var deletes = 0
        var membersAdded = 0
        var membersExisting = 0
        /// Rounds of waiting out a 429's `Retry-After` (not failures).
        var rateLimitWaits = 0
        var failures: [String: Int] = [:]

        mutating func add(_ other: Outcome) {
            conversationsCreated += other.conversationsCreated
            conversationsExisting += other.conversationsExisting
            messages += other.messages
            replies += other.replies
            edits += other.edits
            deletes += other.deletes
            membersAdded += other.membersAdded
            membersExisting += other.membersExisting
            rateLimitWaits += other.rateLimitWaits
            failures.merge(other.failures, uniquingKeysWith: +)
        }

        mutating func fail(_ what: String, _ response: HTTPClientResponse) {
            failures["\(what): \(response.status) \(BodyScan.errorCode(response.body) ?? "-")", default: 0] += 1
        }
    }

    /// Posts in flight per connection.
    static let pipelineDepth = 16
    static let chunkSize = 500

    /// - Parameters:
    ///   - authorization: tokens mode: an admin token's `Authorization` value, sent with every request.
    ///   - members: user ids made members of every conversation (tokens mode's virtual users).
    static func seed(_ plan: SeedPlan, endpoint: ServerEndpoint, parallel: Int, progress: SeedProgress,
                     authorization: String? = nil, members: [String] = []) throws -> Outcome {
        var outcome = try createConversations(plan, endpoint: endpoint, authorization: authorization)
        try addMembers(members, plan: plan, endpoint: endpoint, authorization: authorization, outcome: &outcome)
        let chunks = plan.chunks(of: chunkSize)
        let next = Atomic<Int>(0)
        let results = Mutex<Outcome>(Outcome())
        let firstError = Mutex<String?>(nil)
        DispatchQueue.concurrentPerform(iterations: max(1, parallel)) { worker in
            do {
                let connection = try HTTPClientConnection(host: endpoint.host, port: endpoint.port, timeout: .seconds(60))
                defer { connection.close() }
                var local = Outcome()
                while true {
                    let index = next.add(1, ordering: .relaxed).oldValue
                    guard index < chunks.count else { break }
                    try seedChunk(chunks[index], plan: plan, authorization: authorization, connection: connection,
                                  outcome: &local, progress: progress)
                }
                results.withLock { $0.add(local) }
            } catch {
                firstError.withLock { $0 = $0 ?? "worker \(worker): \(error)" }
            }
        }
        if let error = firstError.withLock({ $0 }) { throw LoadError("seeding failed: \(error)") }
        outcome.add(results.withLock { $0 })
        return outcome
    }

    private static func createConversations(_ plan: SeedPlan, endpoint: ServerEndpoint, authorization: String?) throws -> Outcome {
        var outcome = Outcome()
        let connection = try HTTPClientConnection(host: endpoint.host, port: endpoint.port, timeout: .seconds(60))
        defer { connection.close() }
        var index = 0
        while index < plan.conversations {
            let batch = index..<min(plan.conversations, index + 64)
            let requests = batch.map { i in
                var body = Array(#"{"id":""#.utf8)
                body += plan.conversationID(i).utf8
                body += #"","title":"Load test conversation "#.utf8
                body += String(i).utf8
                body += #""}"#.utf8
                return request(.post, "/v1/conversations", body: body, authorization: authorization)
            }
            for response in try RateLimitedExchange.send(requests, on: connection, waited: &outcome.rateLimitWaits) {
                switch response.status {
                case 201: outcome.conversationsCreated += 1
                case 409: outcome.conversationsExisting += 1
                default: outcome.fail("create conversation", response)
                }
            }
            index = batch.upperBound
        }
        return outcome
    }

    /// `PUT .../members/{user}` for each user in each conversation,
    /// pipelined; idempotent, so seeding again adds nothing.
    private static func addMembers(_ members: [String], plan: SeedPlan, endpoint: ServerEndpoint, authorization: String?,
                                   outcome: inout Outcome) throws {
        guard !members.isEmpty else { return }
        let connection = try HTTPClientConnection(host: endpoint.host, port: endpoint.port, timeout: .seconds(60))
        defer { connection.close() }
        let body = Array(#"{"role":"member"}"#.utf8)
        for index in 0..<plan.conversations {
            let prefix = "/v1/conversations/\(plan.conversationID(index))/members/"
            var start = 0
            while start < members.count {
                let batch = members[start..<min(members.count, start + 64)]
                let requests = batch.map { user in request(.put, prefix + user, body: body, authorization: authorization) }
                for response in try RateLimitedExchange.send(requests, on: connection, waited: &outcome.rateLimitWaits) {
                    switch response.status {
                    case 201: outcome.membersAdded += 1
                    case 200: outcome.membersExisting += 1
                    default: outcome.fail("add member", response)
                    }
                }
                start = batch.endIndex
            }
        }
    }

    private static func seedChunk(_ chunk: SeedChunk, plan: SeedPlan, authorization: String?,
                                  connection: HTTPClientConnection, outcome: inout Outcome, progress: SeedProgress) throws {
        var random = SplitMix64(seed: plan.seed, stream: UInt64(chunk.index) + 1)
        let conversation = plan.conversationID(chunk.conversation)
        let messagesPath = "/v1/conversations/\(conversation)/messages"
        var acked: [Int64] = []
        acked.reserveCapacity(chunk.count)
        var deleted = Set<Int64>()
        var sent = 0
        while sent < chunk.count {
            let batch = min(pipelineDepth, chunk.count - sent)
            var posts: [HTTPRequest] = []
            for offset in 0..<batch {
                let number = chunk.first + sent + offset
                var replyTo: Int64?
                if !acked.isEmpty, Int.random(in: 0..<100, using: &random) < SeedMix.replyPercent {
                    replyTo = acked[Int.random(in: 0..<acked.count, using: &random)]
                    outcome.replies += 1
                }
                let body = TextGenerator.appendJSON(sender: TextGenerator.sender(using: &random),
                                                    body: TextGenerator.body(using: &random),
                                                    clientID: "seed-\(plan.seed)-\(conversation)-\(number)", replyTo: replyTo)
                posts.append(request(.post, messagesPath, body: body, authorization: authorization))
            }
            for response in try RateLimitedExchange.send(posts, on: connection, waited: &outcome.rateLimitWaits) {
                if response.status == 201 || response.status == 200, let id = PostUser.messageID(response.body) {
                    acked.append(id)
                    outcome.messages += 1
                } else {
                    outcome.fail("post", response)
                }
            }
            sent += batch
            progress.add(batch)
            // Edits and deletes of messages already acked, one request at a time (rare).
            for _ in 0..<batch where !acked.isEmpty {
                let roll = Int.random(in: 0..<1000, using: &random)
                guard roll < SeedMix.editPermille + SeedMix.deletePermille else { continue }
                let id = acked[Int.random(in: 0..<acked.count, using: &random)]
                guard !deleted.contains(id) else { continue }
                if roll < SeedMix.editPermille {
                    var body = Array(#"{"body":""#.utf8)
                    body += TextGenerator.body(using: &random).utf8
                    body += #" (edited)"}"#.utf8
                    let response = try RateLimitedExchange.request(request(.patch, "\(messagesPath)/\(id)", body: body, authorization: authorization),
                                                                   on: connection, waited: &outcome.rateLimitWaits)
                    if response.status == 200 { outcome.edits += 1 } else { outcome.fail("edit", response) }
                } else {
                    let response = try RateLimitedExchange.request(request(.delete, "\(messagesPath)/\(id)", body: [], authorization: authorization),
                                                                   on: connection, waited: &outcome.rateLimitWaits)
                    if response.status == 200 { outcome.deletes += 1; deleted.insert(id) } else { outcome.fail("delete", response) }
                }
            }
        }
    }

    private static func request(_ method: HTTPMethod, _ target: String, body: [UInt8], authorization: String?) -> HTTPRequest {
        var headers = HTTPHeaders()
        if !body.isEmpty { headers.add(name: "Content-Type", value: "application/json") }
        if let authorization { headers.add(name: "Authorization", value: authorization) }
        return HTTPRequest(method: method, target: target, headers: headers, body: body)
    }
}
