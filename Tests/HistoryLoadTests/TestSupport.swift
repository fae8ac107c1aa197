import Foundation
import HTTPCore
import HistoryTestSupport
import Testing
@testable import HistoryLoad

extension ServerProcess {
    /// `history-server` on an ephemeral port over `database`: the server
    /// the tool is meant to load, as deployed, except that every virtual
    /// user comes from 127.0.0.1 here, so the per-client caps that keep one
    /// real client from taking every slot are lifted (as the bench's set-up
    /// in docs/performance.md does).
    convenience init(database: String, extraArguments: [String] = []) throws {
        try self.init(arguments: ["--port", "0", "--database", database, "--durability", "normal", "--access-log", "off",
                                  "--max-connections-per-client", "0", "--max-parked-polls-per-client", "100000"]
                      + extraArguments)
    }

    var endpoint: ServerEndpoint { ServerEndpoint(host: "127.0.0.1", port: port) }
}

/// A database seeded with `seed --direct` and a server on it, for one test.
func withSeededServer<T>(conversations: Int = 12, messages: Int = 3_000, _ body: (ServerProcess, SeedPlan) throws -> T) throws -> T {
    try withTemporaryDirectory { directory in
        let path = directory.databasePath
        let plan = SeedPlan(conversations: conversations, messages: messages, seed: 7, prefix: "load-")
        _ = try DirectSeeder.seed(plan, path: path, progress: SeedProgress(total: messages, enabled: false))
        let server = try ServerProcess(database: path)
        defer { server.stop() }
        return try body(server, plan)
    }
}

/// A short, quiet run of one scenario.
func quickPlan(_ endpoint: ServerEndpoint, _ scenario: Scenario, clients: Int = 4, seconds: Int64 = 2) -> LoadPlan {
    var plan = LoadPlan(endpoint: endpoint, scenario: scenario, clients: clients, duration: .seconds(seconds))
    plan.progress = false
    plan.settings.liveConversations = 4
    plan.settings.longPollSeconds = 1
    return plan
}

/// GET a conversation's counters.
func conversationEntry(_ endpoint: ServerEndpoint, _ id: String) throws -> ConversationCatalog.Entry? {
    let connection = try HTTPClientConnection(host: endpoint.host, port: endpoint.port)
    defer { connection.close() }
    let response = try connection.request(HTTPRequest(method: .get, target: "/v1/conversations/\(id)"))
    guard response.status == 200 else { return nil }
    return try ConversationCatalog.Entry(id: id, body: response.body)
}
