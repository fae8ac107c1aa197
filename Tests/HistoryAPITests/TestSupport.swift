import Foundation
import HTTPCore
import HistoryAPI
import HistoryStore
import Testing

/// A running in-process server over a real SQLite file in a temporary folder.
struct TestServer {
    let application: HistoryApplication
    var port: Int { application.port }

    /// A new keep-alive connection over 127.0.0.1.
    func connect(timeout: Duration = .seconds(10)) throws -> HTTPClientConnection {
        try HTTPClientConnection(host: "127.0.0.1", port: port, timeout: timeout)
    }
}

/// Starts a server on port 0, runs `body`, and always shuts the server down
/// and removes its files, whether `body` returns or throws.
func withRunningServer<T>(maximumConnections: Int = 10_000, _ body: (TestServer) throws -> T) throws -> T {
    let folder = FileManager.default.temporaryDirectory.appending(path: "history-api-tests-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    let application = try HistoryApplicationFixture.start(in: folder, maximumConnections: maximumConnections)
    defer { application.shutdownAndWait(gracePeriod: .seconds(2)) }
    return try body(TestServer(application: application))
}

enum HistoryApplicationFixture {
    /// A started application on port 0 with its database in `folder`; the
    /// caller shuts it down and removes the folder.
    static func start(in folder: URL, maximumConnections: Int = 10_000) throws -> HistoryApplication {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let configuration = ServerConfiguration(host: "127.0.0.1", port: 0,
                                                databasePath: folder.appending(path: "history.sqlite").path,
                                                durability: .normal, maximumConnections: maximumConnections,
                                                logLevel: .error, accessLog: false)
        let application = try HistoryApplication(configuration: configuration)
        try application.start()
        return application
    }
}

/// The `withRunningServer { client in }` shape, for tests that need one connection.
func withRunningServer<T>(client body: (HTTPClientConnection) throws -> T) throws -> T {
    try withRunningServer { server in
        let client = try server.connect()
        defer { client.close() }
        return try body(client)
    }
}

// MARK: - Requests

extension HTTPClientConnection {
    func get(_ target: String) throws -> HTTPClientResponse {
        try request(HTTPRequest(method: .get, target: target))
    }

    func post(_ target: String, _ json: String) throws -> HTTPClientResponse {
        try send(.post, target, body: Array(json.utf8))
    }

    func patch(_ target: String, _ json: String) throws -> HTTPClientResponse {
        try send(.patch, target, body: Array(json.utf8))
    }

    func delete(_ target: String) throws -> HTTPClientResponse {
        try request(HTTPRequest(method: .delete, target: target))
    }

    func send(_ method: HTTPMethod, _ target: String, body: [UInt8]) throws -> HTTPClientResponse {
        try request(HTTPRequest(method: method, target: target,
                                headers: ["Content-Type": "application/json", "Content-Length": "\(body.count)"],
                                body: body))
    }

    /// Creates a conversation and returns its id.
    @discardableResult
    func createConversation(_ id: String) throws -> String {
        let response = try post("/v1/conversations", #"{"id":"\#(id)"}"#)
        #expect(response.status == 201, "\(response.text)")
        return id
    }

    /// Appends a message and returns its id.
    @discardableResult
    func appendMessage(_ conversation: String, sender: String = "ana", body: String = "hello") throws -> Int {
        let response = try post("/v1/conversations/\(conversation)/messages", #"{"sender":"\#(sender)","body":"\#(body)"}"#)
        #expect(response.status == 201, "\(response.text)")
        return try response.object()["id"] as? Int ?? -1
    }
}

// MARK: - Responses

struct NotAJSONObject: Error, CustomStringConvertible {
    let text: String
    var description: String { "not a JSON object: \(text)" }
}

extension HTTPClientResponse {
    var text: String { String(decoding: body, as: UTF8.self) }

    /// The body parsed by Foundation (an independent parser) as an object.
    func object() throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else {
            throw NotAJSONObject(text: text)
        }
        return object
    }

    /// `error.code` of the contract's error body, nil when the body is not one.
    var errorCode: String? {
        guard let object = try? object(), let error = object["error"] as? [String: Any],
              error["message"] is String else { return nil }
        return error["code"] as? String
    }

    /// The ids of a page's or an event list's messages, in order.
    func messageIDs() throws -> [Int] {
        let object = try object()
        if let messages = object["messages"] as? [[String: Any]] {
            return messages.compactMap { $0["id"] as? Int }
        }
        let events = object["events"] as? [[String: Any]] ?? []
        return events.compactMap { ($0["message"] as? [String: Any])?["id"] as? Int }
    }
}

/// Expects an error answer with this status and code.
func expectError(_ response: HTTPClientResponse, _ status: Int, _ code: String,
                 sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(response.status == status, "\(response.text)", sourceLocation: sourceLocation)
    #expect(response.errorCode == code, "\(response.text)", sourceLocation: sourceLocation)
}
