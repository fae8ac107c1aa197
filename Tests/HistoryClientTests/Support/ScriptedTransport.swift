import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HistoryClient
import HistoryTestSupport

/// A transport whose answers a test writes: plain answers and event
/// streams (chunks cut where the test likes, then an end, a failure, or an
/// open line until the client hangs up). Records every request, so a test
/// can check what the client asked (a `since`, a `Last-Event-ID`, a stream
/// or a long-poll).
final class ScriptedTransport: HistoryTransport {
    enum Answer: Sendable {
        case json(status: Int, body: String, headers: [String: String] = [:])
        /// A 200 `text/event-stream` whose body is `chunks`, then `end`.
        case stream(chunks: [String], end: StreamEnd = .close)
        /// No answer at all.
        case fail(URLError.Code)
    }

    enum StreamEnd: Sendable {
        case close
        case fail
        /// Stays open until the client hangs up.
        case hang
    }

    struct Request: Sendable {
        var path: String
        var query: [String: String]
        var isStream: Bool
        var lastEventID: String?
        var method: String
        var body: String
        var authorization: String?
    }

    private let script: @Sendable (Request) -> Answer
    private let recorded = Locked<[Request]>([])
    /// Whether `streamingResponse` works at all (false: the protocol's default).
    let canStream: Bool

    init(canStream: Bool = true, _ script: @escaping @Sendable (Request) -> Answer) {
        self.canStream = canStream
        self.script = script
    }

    var requests: [Request] { recorded.value }

    private func record(_ urlRequest: URLRequest, isStream: Bool) -> Request {
        let components = URLComponents(url: urlRequest.url!, resolvingAgainstBaseURL: false)!
        var query: [String: String] = [:]
        for item in components.queryItems ?? [] { query[item.name] = item.value ?? "" }
        let request = Request(path: components.path, query: query, isStream: isStream,
                              lastEventID: urlRequest.value(forHTTPHeaderField: "Last-Event-ID"),
                              method: urlRequest.httpMethod ?? "GET",
                              body: String(decoding: urlRequest.httpBody ?? Data(), as: UTF8.self),
                              authorization: urlRequest.value(forHTTPHeaderField: "Authorization"))
        recorded.withLock { $0.append(request) }
        return request
    }

    private static func http(_ request: URLRequest, _ status: Int, _ headers: [String: String]) -> HTTPURLResponse {
        HTTPURLResponse(url: request.url!, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers)!
    }

    func response(for request: URLRequest, isLongPoll: Bool) async throws -> (Data, HTTPURLResponse) {
        switch script(record(request, isStream: false)) {
        case .json(let status, let body, let headers):
            var all = headers
            all["Content-Type"] = "application/json; charset=utf-8"
            return (Data(body.utf8), Self.http(request, status, all))
        case .stream:
            throw URLError(.badServerResponse)
        case .fail(let code):
            throw URLError(code)
        }
    }

    func streamingResponse(for request: URLRequest) async throws -> HistoryStreamingResponse {
        guard canStream else {
            throw HistoryClientError.streamingUnavailable(reason: "scripted without streams")
        }
        let answer = script(record(request, isStream: true))
        let (body, continuation) = AsyncThrowingStream<Data, any Error>.makeStream()
        switch answer {
        case .json(let status, let text, let headers):
            var all = headers
            all["Content-Type"] = "application/json; charset=utf-8"
            continuation.yield(Data(text.utf8))
            continuation.finish()
            return HistoryStreamingResponse(response: Self.http(request, status, all), body: body,
                                            cancel: { continuation.finish() })
        case .stream(let chunks, let end):
            for chunk in chunks { continuation.yield(Data(chunk.utf8)) }
            switch end {
            case .close: continuation.finish()
            case .fail: continuation.finish(throwing: URLError(.networkConnectionLost))
            case .hang: break
            }
            return HistoryStreamingResponse(
                response: Self.http(request, 200, ["Content-Type": "text/event-stream"]), body: body,
                cancel: { continuation.finish() })
        case .fail(let code):
            throw URLError(code)
        }
    }
}

/// JSON the scripted server answers with.
enum ScriptedJSON {
    /// The plain request a feed makes before it opens a stream, answered
    /// "nothing after `since`" (a conversation's or an inbox's feed).
    static func caughtUp(_ request: ScriptedTransport.Request) -> ScriptedTransport.Answer {
        let since = request.query["since"] ?? "0"
        if request.path.hasPrefix("/v1/users/") {
            return .json(status: 200, body: #"{"events":[],"has_more":false,"activity":\#(since)}"#)
        }
        return .json(status: 200, body: #"{"events":[],"has_more":false,"version":\#(since)}"#)
    }

    static func message(_ id: Int64, version: Int64, sender: String = "ben", conversation: String = "c") -> String {
        #"{"id":\#(id),"conversation_id":"\#(conversation)","sender":"\#(sender)","body":"m\#(id)","created_at":"2026-11-21T10:00:00.000Z","edited_at":null,"deleted":false,"reply_to":null,"client_id":null,"version":\#(version)}"#
    }

    static func event(_ id: Int64, version: Int64) -> String {
        #"{"version":\#(version),"type":"created","message":\#(message(id, version: version))}"#
    }

    /// One stream event: `id:`, `event: created`, `data:`.
    static func sse(_ id: Int64, version: Int64) -> String {
        "id: \(version)\nevent: created\ndata: \(event(id, version: version))\n\n"
    }

    static func batch(_ ids: [Int64], version: Int64, hasMore: Bool = false, typing: [String]? = nil) -> String {
        let events = ids.map { event($0, version: $0) }.joined(separator: ",")
        let typingField = typing.map { #","typing":[\#($0.map { "\"\($0)\"" }.joined(separator: ","))]"# } ?? ""
        return #"{"events":[\#(events)],"has_more":\#(hasMore),"version":\#(version)\#(typingField)}"#
    }

    static func page(_ ids: [Int64], version: Int64, hasOlder: Bool = false) -> String {
        let messages = ids.map { message($0, version: $0) }.joined(separator: ",")
        let oldest = ids.first.map(String.init) ?? "null"
        let newest = ids.last.map(String.init) ?? "null"
        return #"{"messages":[\#(messages)],"has_older":\#(hasOlder),"has_newer":false,"oldest_id":\#(oldest),"newest_id":\#(newest),"version":\#(version)}"#
    }
}
