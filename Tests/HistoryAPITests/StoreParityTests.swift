import Foundation
import HTTPCore
import HistoryAPI
import HistoryTestSupport
import HistoryWiring
import Testing

/// The two stores keep one contract byte for byte: a server on SQLite and
/// one on PostgreSQL get the same seeded random mix of requests (posts with
/// `client_id` and `reply_to`, edits, deletes, members, read markers, every
/// page cursor, conversation and inbox events, inbox paging, bad input), and
/// every answer must be the same status and body, timestamps aside. The
/// HTTP suites' own run on PostgreSQL (`HISTORY_TEST_STORE=postgres`) checks
/// what each test expects; this checks the combinations no test names.
/// `scripts/compare_stores.py` is the same check for longer runs.
@Suite("SQLite and PostgreSQL answer every request alike", .postgresCluster)
struct StoreParityTests {
    @Test(arguments: [1, 2, 3] as [UInt64])
    func aSeededMixOfRequestsGetsTheSameAnswers(seed: UInt64) throws {
        try withTemporaryDirectory { directory in
            let sqlite = try Self.start(database: directory.databasePath)
            defer { sqlite.shutdownAndWait(gracePeriod: .seconds(2)) }
            let postgres = try Self.start(database: try #require(PostgresTestCluster.current).createDatabase())
            defer { postgres.shutdownAndWait(gracePeriod: .seconds(2)) }
            let both = try BothServers(sqlite, postgres)
            defer { both.close() }
            var mix = RequestMix(seed: seed)
            try mix.run(on: both)
            let differing = both.differences.count
            #expect(differing == 0, "the first: \(both.differences.prefix(3).joined(separator: "\n"))")
            #expect(both.count > 400)
        }
    }

    static func start(database: String) throws -> HistoryApplication {
        var configuration = RunningServer.defaultConfiguration
        configuration.databasePath = database
        let application = try HistoryApplication(configuration: configuration)
        try application.start()
        return application
    }
}

/// One connection to each server; `request` sends to both and records any
/// difference, answering what SQLite said.
private final class BothServers {
    let connections: [HTTPClientConnection]
    private(set) var differences: [String] = []
    private(set) var count = 0

    init(_ sqlite: HistoryApplication, _ postgres: HistoryApplication) throws {
        connections = [try HTTPClientConnection(port: sqlite.port), try HTTPClientConnection(port: postgres.port)]
    }

    func close() { connections.forEach { $0.close() } }

    @discardableResult
    func request(_ method: HTTPMethod, _ target: String, _ json: String? = nil) throws -> (status: Int, body: String) {
        let answers = try connections.map { connection in
            let response = if let json {
                try connection.request(method, target, json: json)
            } else {
                try connection.request(HTTPRequest(method: method, target: target))
            }
            return (status: response.status, body: Self.maskingTimestamps(response.bodyText))
        }
        count += 1
        if answers[0] != answers[1] {
            differences.append("\(method) \(target) \(json ?? ""):\n  sqlite \(answers[0].status) \(answers[0].body.prefix(300))"
                               + "\n  postgres \(answers[1].status) \(answers[1].body.prefix(300))")
        }
        return answers[0]
    }

    /// Times are the servers' clocks, the one thing that may differ.
    static func maskingTimestamps(_ text: String) -> String {
        text.replacing(#/"(created_at|edited_at|joined_at)":"[^"]*"/#) { match in "\"\(match.1)\":\"T\"" }
    }
}

/// The requests, drawn from a seeded generator so a failure repeats.
private struct RequestMix {
    var random: SplitMix64
    let users = ["ana", "Bob", "b-c", "d%C3%A9", "_u", "a.b", "aB"]
    let conversations = ["c1", "C2", "c-3", "Zed", "a-b_c.d", "_x", "aB"]
    let bodies = ["hi", "é中😀", String(repeating: "x", count: 16384), "a\\tb\\nc", "\\\"quoted\\\" \\\\ back", " ", "\\u2028"]
    var posted: [String: [Int]] = [:]

    init(seed: UInt64) { random = SplitMix64(seed: seed) }

    mutating func pick<T>(_ values: [T]) -> T { values.randomElement(using: &random)! }
    mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &random) < p }

    mutating func run(on both: BothServers) throws {
        for conversation in conversations {
            try both.request(.post, "/v1/conversations", #"{"id":"\#(conversation)","title":"t \#(conversation)"}"#)
        }
        try both.request(.post, "/v1/conversations", #"{"id":"c1"}"#)
        for step in 0..<400 {
            let conversation = pick(conversations), user = pick(users), path = "/v1/conversations/\(conversation)"
            let ids = posted[conversation, default: []]
            let anyID = pick(ids + [0, 1, 2, 999_999])
            switch Double.random(in: 0..<1, using: &random) {
            case ..<0.35:
                var json = #"{"sender":"\#(user)","body":"\#(pick(bodies))\#(step)""#
                if chance(0.3) { json += #","client_id":"k\#(Int.random(in: 0..<20, using: &random))""# }
                if chance(0.2) { json += #","reply_to":\#(pick(posted.values.flatMap { $0 } + [999_999]))"# }
                let answer = try both.request(.post, "\(path)/messages", json + "}")
                if answer.status == 201, let id = Self.firstNumber("id", in: answer.body) {
                    posted[conversation, default: []].append(id)
                }
            case ..<0.42: try both.request(.patch, "\(path)/messages/\(anyID)", #"{"body":"edit \#(step)"}"#)
            case ..<0.47: try both.request(.delete, "\(path)/messages/\(anyID)")
            case ..<0.55: try both.request(.put, "\(path)/members/\(user)", #"{"role":"\#(pick(["member", "owner"]))"}"#)
            case ..<0.58: try both.request(.delete, "\(path)/members/\(user)")
            case ..<0.64: try both.request(.put, "\(path)/members/\(user)/read", #"{"last_read_id":\#(anyID)}"#)
            case ..<0.75:
                let limit = pick([1, 2, 3, 7, 50, 200])
                let query = pick(["", "&before=\(anyID)", "&after=\(anyID)", "&around=\(anyID)",
                                  "&after=\(anyID)&before=\(pick(ids + [999_999]))",
                                  "&after=\(anyID)&window=\(pick([1, 3, 10]))"])
                try both.request(.get, "\(path)/messages?limit=\(limit)\(query)")
            case ..<0.82:
                let version = Self.firstNumber("version", in: try both.request(.get, path).body) ?? 0
                var query = "since=\(Int.random(in: 0...version + 1, using: &random))&limit=\(pick([1, 2, 5, 100]))"
                if chance(0.3) { query += "&min_id=\(anyID)" }
                if chance(0.3) { query += "&max_id=\(pick(ids + [0, 999_999]))" }
                try both.request(.get, "\(path)/events?\(query)")
            case ..<0.9:
                let limit = pick([1, 2, 50])
                var answer = try both.request(.get, "/v1/users/\(user)/conversations?limit=\(limit)")
                while answer.status == 200, let cursor = Self.cursor(in: answer.body) {
                    answer = try both.request(.get, "/v1/users/\(user)/conversations?limit=\(limit)&cursor=\(cursor)")
                }
            case ..<0.96:
                let answer = try both.request(.get, "/v1/users/\(user)/events?since=0&limit=\(pick([1, 3, 100]))")
                let activity = Self.lastNumber("activity", in: answer.body) ?? 0
                try both.request(.get, "/v1/users/\(user)/events?since=\(Int.random(in: 0...activity + 1, using: &random))&limit=\(pick([1, 3, 100]))")
            default:
                try both.request(.get, "\(path)/members?limit=\(pick([1, 2, 100]))")
            }
        }
        for conversation in conversations {
            try both.request(.get, "/v1/conversations/\(conversation)")
            try both.request(.get, "/v1/conversations/\(conversation)/events?since=0&limit=1000")
            try both.request(.get, "/v1/conversations/\(conversation)/messages?limit=200")
        }
        for user in users {
            try both.request(.get, "/v1/users/\(user)/conversations?limit=200")
            try both.request(.get, "/v1/users/\(user)/events?since=0&limit=1000")
        }
    }

    static func firstNumber(_ key: String, in body: String) -> Int? {
        numbers(key, in: body).first
    }

    static func lastNumber(_ key: String, in body: String) -> Int? {
        numbers(key, in: body).last
    }

    static func numbers(_ key: String, in body: String) -> [Int] {
        body.matches(of: try! Regex(#""\#(key)":(\d+)"#, as: (Substring, Substring).self)).compactMap { Int($0.1) }
    }

    static func cursor(in body: String) -> String? {
        guard let match = body.firstMatch(of: #/"next_cursor":"([^"]+)"/#) else { return nil }
        return String(match.1).addingPercentEncoding(withAllowedCharacters: .alphanumerics)
    }
}
