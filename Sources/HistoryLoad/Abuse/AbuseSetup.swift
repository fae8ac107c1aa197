import Foundation
import HTTPCore

/// What `abuse` brings to the server before its first phase, through the
/// API: `abuse-big`, a conversation of the largest pages there can be, for
/// the clients that never read; `abuse-flood`, where the flood posts; and in
/// tokens mode the attackers' memberships. Running it again finds them there.
struct AbuseSetup {
    static let bigConversation = "abuse-big"
    static let floodConversation = "abuse-flood"
    static let floodSubject = "abuse-flood"
    /// A `limit=200` page of them is the largest page the contract allows.
    static let bigMessages = 200
    /// The contract's longest body, in UTF-8 bytes.
    static let bodyBytes = 16 * 1024

    let endpoint: ServerEndpoint
    /// Tokens mode: an admin token's `Authorization` value.
    let authorization: String?

    static func readerSubject(_ index: Int) -> String { "abuse-reader-" + fourDigits(index) }
    static func pollerSubject(_ index: Int) -> String { "abuse-poller-" + fourDigits(index) }

    private static func fourDigits(_ value: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    /// Creates and fills what the attacks need; returns how `abuse-big`'s messages are made, for the report.
    /// - Parameters:
    ///   - members: tokens mode: the subjects to make members of each conversation id.
    func prepare(big: Bool, flood: Bool, members: [String: [String]]) throws -> String? {
        let connection = Reconnecting(endpoint: endpoint, authorization: authorization)
        defer { connection.close() }
        var bigText: String?
        if big { bigText = try fillBig(connection) }
        if flood { try ensureConversation(Self.floodConversation, connection) }
        for (conversation, subjects) in members.sorted(by: { $0.key < $1.key }) {
            for subject in subjects {
                let response = try connection.request(.put, "/v1/conversations/\(conversation)/members/\(subject)",
                                                      body: Array(#"{"role":"member"}"#.utf8))
                guard response.status == 200 || response.status == 201 else {
                    throw LoadError("PUT /v1/conversations/\(conversation)/members/\(subject): \(response.status) \(response.bodyText.prefix(200))")
                }
            }
        }
        return bigText
    }

    private func ensureConversation(_ id: String, _ connection: Reconnecting) throws {
        let response = try connection.request(.post, "/v1/conversations", body: Array(#"{"id":"\#(id)"}"#.utf8))
        guard response.status == 201 || response.status == 409 else {
            throw LoadError("POST /v1/conversations \(id): \(response.status) \(response.bodyText.prefix(200))")
        }
    }

    /// 200 messages of 16 KiB of U+0008: two bytes each in the request
    /// (`\b`), six in the answer (`\u0008`) when the server escapes it that
    /// way, so a `limit=200` page is about 20 MB. A server that refuses the
    /// control character gets 16 KiB of letters instead.
    private func fillBig(_ connection: Reconnecting) throws -> String {
        try ensureConversation(Self.bigConversation, connection)
        let current = try connection.request(.get, "/v1/conversations/\(Self.bigConversation)")
        if current.status == 200, let count = (try? BodyScan.integers(current.body, ["message_count"]))?.first ?? nil,
           count >= Int64(Self.bigMessages) {
            return "\(Self.bigConversation): \(count) messages there already"
        }
        var escaped = true
        var index = 0
        while index < Self.bigMessages {
            let text = escaped ? String(repeating: "\\b", count: Self.bodyBytes) : String(repeating: "x", count: Self.bodyBytes)
            let body = #"{"sender":"abuse-setup","body":"\#(text)","client_id":"abuse-big-\#(escaped ? "b" : "x")\#(index)"}"#
            let response = try connection.request(.post, "/v1/conversations/\(Self.bigConversation)/messages", body: Array(body.utf8))
            if response.status == 201 || response.status == 200 {
                index += 1
            } else if escaped && index == 0 && (400...499).contains(response.status) {
                escaped = false
            } else {
                throw LoadError("POST /v1/conversations/\(Self.bigConversation)/messages: \(response.status) \(response.bodyText.prefix(200))")
            }
        }
        return "\(Self.bigConversation): \(Self.bigMessages) messages of 16 KiB of "
            + (escaped ? "U+0008 (6 bytes each as JSON)" : "letters (the server refused U+0008)")
    }
}

/// A blocking connection for the setup that reopens after the server
/// closes it, and waits out a 429 or 503 (`Retry-After`) before trying again.
final class Reconnecting {
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

    func request(_ method: HTTPMethod, _ target: String, body: [UInt8] = []) throws -> HTTPClientResponse {
        var headers = HTTPHeaders()
        if let authorization { headers.add(name: "Authorization", value: authorization) }
        if !body.isEmpty { headers.add(name: "Content-Type", value: "application/json") }
        let request = HTTPRequest(method: method, target: target, headers: headers, body: body)
        var attempt = 0
        while true {
            attempt += 1
            do {
                if connection == nil { connection = try HTTPClientConnection(host: endpoint.host, port: endpoint.port, timeout: .seconds(60)) }
                let response = try connection!.request(request)
                if response.headers["Connection"]?.caseInsensitiveEquals("close") == true { close() }
                if (response.status == 429 || response.status == 503) && attempt < 30 {
                    let wait = response.headers["Retry-After"].flatMap { Double($0) } ?? 1
                    Thread.sleep(forTimeInterval: min(10, max(0.1, wait)))
                    continue
                }
                return response
            } catch {
                close()
                if attempt >= 5 { throw LoadError("\(method) \(target): \(error)") }
                Thread.sleep(forTimeInterval: 0.2)
            }
        }
    }
}
