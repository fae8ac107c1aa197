import HTTPCore

/// The conversations a run loads, learned from the server before it starts.
///
/// `seed` names its conversations `load-0000`, `load-0001`, ... (the
/// largest first), so `run` finds them by asking for each id in turn until
/// the server answers 404: no manifest file to carry between machines, and a
/// database seeded with `--direct` is found the same way.
struct ConversationCatalog: Sendable {
    struct Entry: Sendable, Hashable {
        var id: String
        var messageCount: Int64
        var oldestID: Int64?
        var newestID: Int64?
        var version: Int64
        /// `/v1/conversations/<id>/messages?`, ready for a query.
        var messagesPrefix: String
        /// `/v1/conversations/<id>/events?`.
        var eventsPrefix: String
    }

    let entries: [Entry]
    /// Conversations with messages.
    let nonEmpty: [Entry]
    /// Non-empty conversations, the most messages first.
    let largestFirst: [Entry]

    init(entries: [Entry]) {
        self.entries = entries
        nonEmpty = entries.filter { $0.messageCount > 0 }
        largestFirst = nonEmpty.sorted { $0.messageCount > $1.messageCount }
    }

    static func conversationID(prefix: String, index: Int) -> String {
        let digits = String(index)
        return prefix + String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    /// Asks for `prefix0000`, `prefix0001`, ... in pipelined batches until one is missing.
    /// - Parameter authorization: tokens mode: an admin token's `Authorization` value.
    static func discover(endpoint: ServerEndpoint, prefix: String, maximum: Int,
                         authorization: String? = nil) throws -> ConversationCatalog {
        let connection = try HTTPClientConnection(host: endpoint.host, port: endpoint.port, timeout: .seconds(30))
        defer { connection.close() }
        var entries: [Entry] = []
        let batch = 64
        var next = 0
        discovery: while next < maximum {
            let ids = (next..<min(maximum, next + batch)).map { conversationID(prefix: prefix, index: $0) }
            for id in ids {
                var headers = HTTPHeaders()
                if let authorization { headers.add(name: "Authorization", value: authorization) }
                try connection.send(HTTPRequest(method: .get, target: "/v1/conversations/\(id)", headers: headers))
            }
            var missing = false
            for id in ids {
                let response = try connection.receive()
                guard !missing, response.status == 200 else { missing = true; continue }
                guard let entry = try? Entry(id: id, body: response.body) else {
                    throw LoadError("GET /v1/conversations/\(id): not a conversation")
                }
                entries.append(entry)
            }
            if missing { break discovery }
            next += batch
        }
        return ConversationCatalog(entries: entries)
    }

    /// The conversations named, in that order, that exist (one pipelined batch).
    static func discoverExactly(_ ids: [String], endpoint: ServerEndpoint, authorization: String? = nil) throws -> ConversationCatalog {
        let connection = try HTTPClientConnection(host: endpoint.host, port: endpoint.port, timeout: .seconds(30))
        defer { connection.close() }
        for id in ids {
            var headers = HTTPHeaders()
            if let authorization { headers.add(name: "Authorization", value: authorization) }
            try connection.send(HTTPRequest(method: .get, target: "/v1/conversations/\(id)", headers: headers))
        }
        var entries: [Entry] = []
        for id in ids {
            let response = try connection.receive()
            guard response.status == 200 else { continue }
            guard let entry = try? Entry(id: id, body: response.body) else {
                throw LoadError("GET /v1/conversations/\(id): not a conversation")
            }
            entries.append(entry)
        }
        return ConversationCatalog(entries: entries)
    }

    /// The conversation with the most messages (`deep`, `newest`).
    var largest: Entry? { largestFirst.first }

    /// Short conversations (at most `limit` messages, not the largest): `short`.
    func short(limit: Int64 = 2_000) -> [Entry] {
        let largestID = largest?.id
        let shorts = entries.filter { $0.messageCount > 0 && $0.messageCount <= limit && $0.id != largestID }
        return shorts.isEmpty ? nonEmpty : shorts
    }

    /// The first `count` conversations: where posts land and tails listen.
    func live(_ count: Int) -> [Entry] { Array(entries.prefix(max(1, count))) }
}

extension ConversationCatalog.Entry {
    init(id: String, body: [UInt8]) throws(ScanError) {
        let values = try BodyScan.integers(body, ["message_count", "oldest_id", "newest_id", "version"])
        guard let count = values[0], let version = values[3] else { throw ScanError.missingField("message_count") }
        self.init(id: id, messageCount: count, oldestID: values[1], newestID: values[2], version: version,
                  messagesPrefix: "/v1/conversations/\(id)/messages?", eventsPrefix: "/v1/conversations/\(id)/events?")
    }
}

/// A failure the tool reports and exits on (before or after loading, never during).
struct LoadError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
