import HTTPCore

/// What the bench's inbox rows need on the server, made through the API
/// (pipelined, idempotent, each part skipped when a previous bench left it
/// complete):
/// - `inbox-light`, a member of `inbox-light-0000`... (`small` of them), and
///   `inbox-heavy`, a member of `inbox-heavy-0000`... (`large`), one message each;
/// - `inbox-crowd` with `crowd` members and `inbox-pair` with 2;
/// - `pollers` users `inbox-poller-00000`..., each a member of
///   `membershipsPerPoller` of the conversations `inbox-feed-0000`... (`feedConversations`).
struct InboxBenchSetup {
    static let lightUser = "inbox-light"
    static let heavyUser = "inbox-heavy"
    static let crowdConversation = "inbox-crowd"
    static let pairConversation = "inbox-pair"

    let endpoint: ServerEndpoint
    let authorization: String?
    var small = 10
    var large = 10_000
    var crowd = 1_000
    var pollers = 10_000
    var feedConversations = 1_000
    var membershipsPerPoller = 2

    static func lightConversation(_ index: Int) -> String { ConversationCatalog.conversationID(prefix: "inbox-light-", index: index) }
    static func heavyConversation(_ index: Int) -> String { ConversationCatalog.conversationID(prefix: "inbox-heavy-", index: index) }
    static func feedConversation(_ index: Int) -> String { ConversationCatalog.conversationID(prefix: "inbox-feed-", index: index) }
    static func crowdMember(_ index: Int) -> String { ConversationCatalog.conversationID(prefix: "inbox-member-", index: index) }

    static func poller(_ index: Int) -> String {
        let digits = String(index)
        return "inbox-poller-" + String(repeating: "0", count: max(0, 5 - digits.count)) + digits
    }

    /// The feed conversations poller `index` is a member of: spread evenly, distinct.
    func pollerConversations(_ index: Int) -> [Int] {
        let count = min(membershipsPerPoller, feedConversations)
        return (0..<count).map { (index + $0 * max(1, feedConversations / count)) % feedConversations }
    }

    /// Makes whatever is missing; returns a line per part for the log.
    func prepare(log: (String) -> Void) throws {
        let connection = PipelinedSetup(endpoint: endpoint, authorization: authorization)
        defer { connection.close() }
        for (user, count, name) in [(Self.lightUser, small, Self.lightConversation), (Self.heavyUser, large, Self.heavyConversation)] {
            if try connection.messageCount(name(count - 1)) ?? 0 > 0 { continue }
            log("bench: inbox set-up: \(user), a member of \(count) conversations with a message each")
            try connection.run((0..<count).map { .createConversation(name($0)) })
            try connection.run((0..<count).map { .putMember(name($0), user) })
            try connection.run((0..<count).map { .post(name($0), "inbox-setup-\(name($0))") })
        }
        let pairReady = try connection.isMember(Self.crowdMember(1), of: Self.pairConversation)
        let crowdReady = try connection.isMember(Self.crowdMember(crowd - 1), of: Self.crowdConversation)
        if !pairReady || !crowdReady {
            log("bench: inbox set-up: \(Self.crowdConversation) with \(crowd) members, \(Self.pairConversation) with 2")
            try connection.run([.createConversation(Self.crowdConversation)])
            try connection.run((0..<crowd).map { .putMember(Self.crowdConversation, Self.crowdMember($0)) })
            try connection.run([.createConversation(Self.pairConversation)])
            try connection.run((0..<2).map { .putMember(Self.pairConversation, Self.crowdMember($0)) })
        }
        let lastPoller = Self.poller(pollers - 1)
        if try connection.inboxRows(of: lastPoller) < pollerConversations(pollers - 1).count {
            log("bench: inbox set-up: \(pollers) users, each a member of \(min(membershipsPerPoller, feedConversations)) of \(feedConversations) conversations")
            try connection.run((0..<feedConversations).map { .createConversation(Self.feedConversation($0)) })
            var puts: [PipelinedSetup.Step] = []
            for index in 0..<pollers {
                for conversation in pollerConversations(index) { puts.append(.putMember(Self.feedConversation(conversation), Self.poller(index))) }
            }
            try connection.run(puts)
        }
    }
}

/// One keep-alive connection sending set-up requests 64 at a time, each
/// answer checked (a conversation or member already there is fine).
final class PipelinedSetup {
    enum Step {
        case createConversation(String)
        case putMember(String, String)
        case post(String, String)
    }

    let endpoint: ServerEndpoint
    let authorization: String?
    private var connection: HTTPClientConnection?

    init(endpoint: ServerEndpoint, authorization: String?) {
        self.endpoint = endpoint
        self.authorization = authorization
    }

    func close() {
        connection?.close()
        connection = nil
    }

    private func open() throws -> HTTPClientConnection {
        if let connection { return connection }
        let opened = try HTTPClientConnection(host: endpoint.host, port: endpoint.port, timeout: .seconds(120))
        connection = opened
        return opened
    }

    private func request(_ method: HTTPMethod, _ target: String, body: [UInt8] = []) -> HTTPRequest {
        var headers = HTTPHeaders()
        if !body.isEmpty { headers.add(name: "Content-Type", value: "application/json") }
        if let authorization { headers.add(name: "Authorization", value: authorization) }
        return HTTPRequest(method: method, target: target, headers: headers, body: body)
    }

    private func request(for step: Step) -> (HTTPRequest, accepted: Set<Int>) {
        switch step {
        case .createConversation(let id):
            (request(.post, "/v1/conversations", body: Array(#"{"id":"\#(id)"}"#.utf8)), [201, 409])
        case .putMember(let conversation, let user):
            (request(.put, "/v1/conversations/\(conversation)/members/\(user)", body: Array(#"{"role":"member"}"#.utf8)), [200, 201])
        case .post(let conversation, let clientID):
            (request(.post, "/v1/conversations/\(conversation)/messages",
                     body: Array(#"{"sender":"inbox-setup","body":"hello","client_id":"\#(clientID)"}"#.utf8)), [200, 201])
        }
    }

    func run(_ steps: [Step]) throws {
        let connection = try open()
        var start = 0
        while start < steps.count {
            let batch = steps[start..<min(steps.count, start + 64)].map { request(for: $0) }
            for (request, _) in batch { try connection.send(request) }
            for (request, accepted) in batch {
                let response = try connection.receive()
                guard accepted.contains(response.status) else {
                    throw LoadError("inbox set-up: \(request.method) \(request.target) answered \(response.status) "
                                    + "\(BodyScan.errorCode(response.body) ?? "")")
                }
            }
            start += batch.count
        }
    }

    /// A conversation's `message_count`, nil when it does not exist.
    func messageCount(_ conversation: String) throws -> Int64? {
        let response = try open().request(request(.get, "/v1/conversations/\(conversation)"))
        guard response.status == 200 else { return nil }
        return (try? BodyScan.integers(response.body, ["message_count"]))?.first ?? nil
    }

    func isMember(_ user: String, of conversation: String) throws -> Bool {
        let response = try open().request(request(.get, "/v1/conversations/\(conversation)/members?limit=1000&after=\(user.dropLast())"))
        return response.status == 200 && response.bodyText.contains("\"\(user)\"")
    }

    /// How many rows the first page of `user`'s inbox holds (up to 200).
    func inboxRows(of user: String) throws -> Int {
        let response = try open().request(request(.get, "/v1/users/\(user)/conversations?limit=200"))
        guard response.status == 200 else { return 0 }
        var summary = InboxSummary()
        try summary.scan(response.body)
        return summary.rows.count
    }
}
