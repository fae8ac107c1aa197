import Foundation
import HTTPCore
import Synchronization
import Testing
@testable import HistoryLoad

/// A temporary folder, removed afterwards whatever happens.
func withTemporaryFolder<T>(_ body: (URL) throws -> T) throws -> T {
    let url = FileManager.default.temporaryDirectory.appending(path: "history-load-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: url) }
    return try body(url)
}

/// The real `history-server` binary as a child process on an ephemeral port
/// over a SQLite file: the server the tool is meant to load.
///
/// It sits next to the test bundle (`swift build` / `swift test` build every
/// product of the package).
final class ServerUnderTest: Sendable {
    static var binary: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appending(path: "history-server")
    }

    struct StartupFailed: Error, CustomStringConvertible {
        let output: String
        var description: String { "history-server did not start (build it first: swift build): \(output)" }
    }

    private final class Output: Sendable {
        let bytes = Mutex<[UInt8]>([])
    }

    private let process: Process
    let endpoint: ServerEndpoint

    init(database: String, extraArguments: [String] = []) throws {
        guard FileManager.default.isExecutableFile(atPath: Self.binary.path) else {
            throw StartupFailed(output: "no binary at \(Self.binary.path)")
        }
        let process = Process()
        process.executableURL = Self.binary
        process.arguments = ["--port", "0", "--database", database, "--durability", "normal", "--access-log", "off"] + extraArguments
        let stdout = Pipe()
        process.standardOutput = stdout
        process.standardError = stdout
        let output = Output()
        stdout.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            output.bytes.withLock { $0 += data }
        }
        try process.run()
        self.process = process
        var port: Int?
        let deadline = ContinuousClock.now + .seconds(30)
        while port == nil, ContinuousClock.now < deadline, process.isRunning {
            let text = output.bytes.withLock { String(decoding: $0, as: UTF8.self) }
            if text.contains("\n"), let range = text.range(of: "http://127.0.0.1:") {
                port = Int(text[range.upperBound...].prefix { $0.isNumber })
            }
            if port == nil { Thread.sleep(forTimeInterval: 0.01) }
        }
        guard let port else {
            if process.isRunning { kill(process.processIdentifier, SIGKILL); process.waitUntilExit() }
            throw StartupFailed(output: output.bytes.withLock { String(decoding: $0, as: UTF8.self) })
        }
        endpoint = ServerEndpoint(host: "127.0.0.1", port: port)
    }

    func stop() {
        guard process.isRunning else { return }
        process.interrupt()
        let deadline = ContinuousClock.now + .seconds(10)
        while process.isRunning && ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.01) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}

/// A database seeded with `seed --direct` and a server on it, for one test.
func withSeededServer<T>(conversations: Int = 12, messages: Int = 3_000, _ body: (ServerUnderTest, SeedPlan) throws -> T) throws -> T {
    try withTemporaryFolder { folder in
        let path = folder.appending(path: "history.sqlite").path
        let plan = SeedPlan(conversations: conversations, messages: messages, seed: 7, prefix: "load-")
        _ = try DirectSeeder.seed(plan, path: path, progress: SeedProgress(total: messages, enabled: false))
        let server = try ServerUnderTest(database: path)
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
