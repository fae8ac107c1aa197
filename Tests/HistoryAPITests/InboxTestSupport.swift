import HistoryTestSupport
import Foundation
import HTTPCore
import HistoryClient
import Testing

/// The inbox's bodies as the contract spells them (docs/API.md, "Inbox"),
/// decoded by Foundation, independent of the server's writer.
struct InboxConversationBody: Decodable, Equatable {
    let id: String
    let title: String?
    let created_at: String
    let message_count: Int64
    let oldest_id: Int64?
    let newest_id: Int64?
    let version: Int64
}

struct InboxRowBody: Decodable {
    let conversation: InboxConversationBody
    let role: String
    let last_message: HistoryMessage?
    let last_read_id: Int64?
    let first_unread_id: Int64?
    let unread_count: Int
    let unread_capped: Bool
    let activity: Int64
}

struct InboxPageBody: Decodable {
    let conversations: [InboxRowBody]
    let next_cursor: String?
    let activity: Int64

    var ids: [String] { conversations.map(\.conversation.id) }
}

struct ReadStateBody: Decodable, Equatable {
    let last_read_id: Int64?
    let first_unread_id: Int64?
    let unread_count: Int
    let unread_capped: Bool
}

/// An `updated` event carries a whole row, a `removed` one only the id.
struct InboxEventBody: Decodable {
    let type: String
    let activity: Int64
    let conversation: InboxConversationBody?
    let conversation_id: String?
    let last_message: HistoryMessage?
    let last_read_id: Int64?
    let unread_count: Int?

    /// The conversation the event is about, whichever kind it is.
    var conversationID: String? { conversation?.id ?? conversation_id }
}

struct InboxFeedBody: Decodable {
    let events: [InboxEventBody]
    let has_more: Bool
    let activity: Int64
}

extension HTTPClientConnection {
    /// `ids` created and `members` added to each (open mode).
    func makeConversations(_ ids: [String], members: [String], sourceLocation: SourceLocation = #_sourceLocation) throws {
        for id in ids {
            try createConversation(id, sourceLocation: sourceLocation)
            for member in members {
                let added = try call(.put, "/v1/conversations/\(id)/members/\(member)", json: "{}")
                #expect(added.status == 201, "\(added.bodyText)", sourceLocation: sourceLocation)
            }
        }
    }

    /// `user`'s inbox page (open mode unless `token`), expected 200.
    func inbox(_ user: String, _ query: String = "", token: String? = nil,
               sourceLocation: SourceLocation = #_sourceLocation) throws -> InboxPageBody {
        let response = try call(.get, "/v1/users/\(user)/conversations" + (query.isEmpty ? "" : "?\(query)"), token: token)
        #expect(response.status == 200, "\(response.bodyText)", sourceLocation: sourceLocation)
        return try response.decode(InboxPageBody.self)
    }

    /// `user`'s inbox feed after `since` (no wait), expected 200.
    func inboxFeed(_ user: String, since: Int64, limit: Int? = nil, token: String? = nil,
                   sourceLocation: SourceLocation = #_sourceLocation) throws -> InboxFeedBody {
        let response = try call(.get, "/v1/users/\(user)/events?since=\(since)" + (limit.map { "&limit=\($0)" } ?? ""),
                                token: token)
        #expect(response.status == 200, "\(response.bodyText)", sourceLocation: sourceLocation)
        return try response.decode(InboxFeedBody.self)
    }

    /// Moves `user`'s marker in `conversation`; the raw answer.
    func markRead(_ user: String, in conversation: String, upTo id: Int64, token: String? = nil) throws -> HTTPClientResponse {
        try call(.put, "/v1/conversations/\(conversation)/members/\(user)/read", token: token,
                 json: #"{"last_read_id":\#(id)}"#)
    }
}

extension RunningServer {
    /// Sends a long-poll on a new connection without waiting for its answer.
    func parkPoll(_ target: String, token: String? = nil) throws -> HTTPClientConnection {
        let connection = try connect(timeout: .seconds(60))
        var headers: HTTPHeaders = ["Host": "127.0.0.1"]
        if let token { headers.add(name: "Authorization", value: "Bearer \(token)") }
        try connection.send(HTTPRequest(method: .get, target: target, headers: headers))
        return connection
    }
}
