import Foundation
import HTTPCore
import HistoryClient
import Testing

/// The contract's error body, `{"error":{"code","message"}}`.
public struct ContractErrorBody: Decodable, Sendable {
    public struct Detail: Decodable, Sendable {
        public let code: String
        public let message: String
    }

    public let error: Detail
}

/// Answers read as the contract's types: decoded by `ChatHistoryClient`'s
/// models and JSON decoder (Foundation's parser, independent of the
/// server's writer), so a misspelt or mistyped member fails the decode.
extension HTTPClientResponse {
    public func decode<T: Decodable>(_ type: T.Type = T.self) throws -> T {
        try HistoryJSON.makeDecoder().decode(T.self, from: Data(body))
    }

    /// `error.code` of the contract's error body, nil when the body is not one.
    public var errorCode: String? {
        (try? decode(ContractErrorBody.self))?.error.code
    }

    /// The ids of a page's or an event list's messages, in order.
    public func messageIDs() throws -> [Int64] {
        if let page = try? decode(HistoryPage.self) {
            return page.messages.map(\.id)
        }
        return try decode(HistoryEventBatch.self).events.map(\.message.id)
    }
}

/// Expects an error answer with this status and code.
public func expectError(_ response: HTTPClientResponse, _ status: Int, _ code: String,
                        sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(response.status == status, "\(response.bodyText)", sourceLocation: sourceLocation)
    #expect(response.errorCode == code, "\(response.bodyText)", sourceLocation: sourceLocation)
}

extension HTTPClientConnection {
    /// Creates a conversation and returns its id.
    @discardableResult
    public func createConversation(_ id: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let response = try post("/v1/conversations", #"{"id":"\#(id)"}"#)
        #expect(response.status == 201, "\(response.bodyText)", sourceLocation: sourceLocation)
        return id
    }

    /// Appends a message and returns its id.
    @discardableResult
    public func appendMessage(_ conversation: String, sender: String = "ana", body: String = "hello",
                              sourceLocation: SourceLocation = #_sourceLocation) throws -> Int64 {
        let response = try post("/v1/conversations/\(conversation)/messages", #"{"sender":"\#(sender)","body":"\#(body)"}"#)
        #expect(response.status == 201, "\(response.bodyText)", sourceLocation: sourceLocation)
        return try response.decode(HistoryMessage.self).id
    }
}
