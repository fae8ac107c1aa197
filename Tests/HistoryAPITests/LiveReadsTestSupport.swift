import HistoryTestSupport
import Foundation
import HTTPCore
import Testing

/// The shapes of docs/API.md "Live" as a client reads them, decoded by
/// Foundation, independent of the server's writer.
struct RawMessageBody: Decodable, Equatable {
    let id: Int64
    let conversation_id: String
    let sender: String
    let body: String
    let created_at: String
    let deleted: Bool
    let version: Int64
}

struct AnchorBody: Decodable, Equatable {
    let id: Int64?
    let found: Bool
    let index: Int?
}

struct JumpPageBody: Decodable {
    let messages: [RawMessageBody]
    let has_older: Bool
    let has_newer: Bool
    let anchor: AnchorBody?

    var ids: [Int64] { messages.map(\.id) }
}

struct ServerMemberBody: Decodable, Equatable {
    let user_id: String
    let role: String?
    let joined_at: String?
}

struct ServerEventBody: Decodable {
    let activity: Int64
    let type: String
    let conversation_id: String
    let message: RawMessageBody?
    let member: ServerMemberBody?
}

struct ServerFeedBody: Decodable {
    let events: [ServerEventBody]
    let has_more: Bool
    let activity: Int64
}

extension HTTPClientConnection {
    /// `GET /v1/events?since=A[&limit=L]`, expected 200.
    func serverFeed(since: Int64, limit: Int? = nil, token: String? = nil,
                    sourceLocation: SourceLocation = #_sourceLocation) throws -> ServerFeedBody {
        let target = "/v1/events?since=\(since)" + (limit.map { "&limit=\($0)" } ?? "")
        let response = try call(.get, target, token: token)
        #expect(response.status == 200, "\(response.bodyText)", sourceLocation: sourceLocation)
        return try response.decode(ServerFeedBody.self)
    }

    /// Every event after `since`, paged with `limit`, checking each page's cursor.
    func wholeServerFeed(since: Int64, limit: Int, token: String? = nil) throws -> [ServerEventBody] {
        var events: [ServerEventBody] = []
        var since = since
        while true {
            let page = try serverFeed(since: since, limit: limit, token: token)
            #expect(page.events.count <= limit)
            events += page.events
            if page.has_more { #expect(page.activity == page.events.last?.activity) }
            since = page.activity
            if !page.has_more { return events }
        }
    }

    /// Appends and returns the message as the server answered it.
    func appendRaw(_ conversation: String, sender: String = "ana", body: String = "hello",
                   sourceLocation: SourceLocation = #_sourceLocation) throws -> RawMessageBody {
        let response = try post("/v1/conversations/\(conversation)/messages", #"{"sender":"\#(sender)","body":"\#(body)"}"#)
        #expect(response.status == 201, "\(response.bodyText)", sourceLocation: sourceLocation)
        return try response.decode(RawMessageBody.self)
    }
}

/// Milliseconds since the epoch of a contract time (`...T10:00:00.123Z`).
func milliseconds(_ text: String) -> Int64 {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    let date = formatter.date(from: text)!
    return Int64((date.timeIntervalSince1970 * 1000).rounded())
}

/// An RFC 3339 time for milliseconds since the epoch, at `offset` seconds
/// from UTC (`Z` for 0, else `+01:00` and the like). A tenth of a
/// millisecond is added so that neither rounding nor truncation of the
/// binary fraction can name the millisecond before.
func rfc3339(_ milliseconds: Int64, offset: Int = 0) -> String {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    formatter.timeZone = TimeZone(secondsFromGMT: offset)!
    return formatter.string(from: Date(timeIntervalSince1970: (Double(milliseconds) + 0.1) / 1000))
}
