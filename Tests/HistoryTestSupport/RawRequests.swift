import HTTPCore

/// Requests written by hand over one real socket, for tests that must control
/// every byte (a half-sent head, pipelining) or see the answer exactly as sent.
extension HTTPClientConnection {
    public func sendRaw(_ text: String) throws {
        try sendRaw(Array(text.utf8))
    }

    public func get(_ target: String) throws -> HTTPClientResponse {
        try request(HTTPRequest(method: .get, target: target))
    }

    public func delete(_ target: String) throws -> HTTPClientResponse {
        try request(HTTPRequest(method: .delete, target: target))
    }

    public func post(_ target: String, _ json: String) throws -> HTTPClientResponse {
        try request(.post, target, json: json)
    }

    public func patch(_ target: String, _ json: String) throws -> HTTPClientResponse {
        try request(.patch, target, json: json)
    }

    /// Sends `json` as the body with `method` and waits for the answer.
    public func request(_ method: HTTPMethod, _ target: String, json: String) throws -> HTTPClientResponse {
        try request(method, target, body: Array(json.utf8))
    }

    /// Sends `body` (any bytes, labelled JSON) with `method` and waits for the answer.
    public func request(_ method: HTTPMethod, _ target: String, body: [UInt8]) throws -> HTTPClientResponse {
        try request(HTTPRequest(method: method, target: target,
                                headers: ["Content-Type": "application/json", "Content-Length": "\(body.count)"],
                                body: body))
    }
}
