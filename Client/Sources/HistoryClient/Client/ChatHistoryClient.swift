import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An async/await client for every endpoint of the chat history API.
///
/// One instance per server, shared by every screen: its transport (by
/// default a ``URLSessionTransport``) keeps requests on warm keep-alive
/// connections. Every method throws ``HistoryClientError`` (or
/// `CancellationError` when the calling task is cancelled).
///
/// ```swift
/// let client = ChatHistoryClient(baseURL: URL(string: "http://127.0.0.1:8080")!)
/// let page = try await client.page(of: "general")                  // the newest 50
/// let older = try await client.page(of: "general", .before(page.oldestID!))
/// for try await event in client.events(of: "general", since: page.version) {
///     let changes = window.apply(event)
/// }
/// ```
///
/// A page, a conversation, one message, members or an inbox page asked for
/// again goes with the `ETag` of the answer the client holds
/// (``HistoryClientConfiguration/revalidates``): when nothing changed the
/// server answers 304 without a body, and the method returns the held
/// answer, the same value a 200 would have decoded.
///
/// A server in tokens mode wants a bearer token with every request: give the
/// configuration a ``HistoryTokenProvider`` (the app's call to its backend).
///
/// ```swift
/// let client = ChatHistoryClient(baseURL: url, configuration: HistoryClientConfiguration(
///     tokenProvider: { try await account.freshHistoryToken() }))
/// ```
///
/// Related: the contract, `docs/API.md` in the repository.
public final class ChatHistoryClient: Sendable {
    public let configuration: HistoryClientConfiguration
    /// Carries the requests: a ``URLSessionTransport`` unless the app injects one.
    public let transport: any HistoryTransport
    private let base: LockedBox<URL>
    /// ``setTyping(_:in:)``'s throttles, per conversation.
    let typingState = LockedBox(TypingState())
    /// The answers asked again with `If-None-Match`; nil when
    /// ``HistoryClientConfiguration/revalidates`` is off.
    let answers: RevalidationCache?

    /// The longest `wait` the contract allows.
    static let maximumWait: Duration = .seconds(60)

    /// - Parameters:
    ///   - baseURL: the server's root, e.g. `http://127.0.0.1:8080`; a path
    ///     prefix (`https://host/chat`) is kept in front of every route.
    ///   - configuration: timeouts, the event stream's reconnect policy, and
    ///     the token provider of a tokens-mode server.
    ///   - transport: how requests travel; nil makes a ``URLSessionTransport``
    ///     with the configuration's timeouts. Inject one in an app's tests.
    public init(baseURL: URL, configuration: HistoryClientConfiguration = HistoryClientConfiguration(),
                transport: (any HistoryTransport)? = nil) {
        self.configuration = configuration
        self.base = LockedBox(baseURL)
        self.answers = configuration.revalidates ? RevalidationCache() : nil
        self.transport = transport ?? URLSessionTransport(
            requestTimeout: configuration.requestTimeout,
            longPollTimeout: Self.maximumWait + configuration.longPollMargin,
            streamIdleTimeout: configuration.streamIdleTimeout)
    }

    /// Where requests go now.
    public var baseURL: URL {
        base.withLock { $0 }
    }

    /// Points later requests (including the next poll of running event
    /// streams) at another server root: a fail-over address, or a test
    /// server restarted on another port. Requests in flight finish where
    /// they started.
    public func setBaseURL(_ url: URL) {
        base.withLock { $0 = url }
    }

    // MARK: - Health and metrics

    /// `GET /healthz`. A server whose store cannot answer throws
    /// `.server` with code ``HistoryErrorCode/storeUnavailable`` (503).
    public func health() async throws -> HealthStatus {
        try await send(HistoryEndpoint(method: "GET", path: ["healthz"]), as: HealthStatus.self).value
    }

    /// `GET /metrics`: the Prometheus text, unparsed.
    public func metrics() async throws -> String {
        let (data, _) = try await perform(HistoryEndpoint(method: "GET", path: ["metrics"]))
        return String(decoding: data, as: UTF8.self)
    }

    // MARK: - Conversations

    /// `POST /v1/conversations`. A nil `id` lets the server generate one.
    /// An id that exists throws code ``HistoryErrorCode/conversationExists`` (409).
    public func createConversation(id: String? = nil, title: String? = nil) async throws -> HistoryConversation {
        let body = CreateConversationBody(id: id, title: title)
        let endpoint = HistoryEndpoint(method: "POST", path: ["v1", "conversations"], body: try encode(body))
        return try await send(endpoint, as: HistoryConversation.self).value
    }

    /// `GET /v1/conversations/{id}`.
    public func conversation(_ id: String) async throws -> HistoryConversation {
        try await send(HistoryEndpoint(method: "GET", path: ["v1", "conversations", id], revalidates: true),
                       as: HistoryConversation.self).value
    }

    // MARK: - Messages

    /// `POST /v1/conversations/{id}/messages`.
    ///
    /// Pass a `clientID` (a UUID string) and retry with the same one after a
    /// timeout: the server stores the message once and answers the original
    /// (``AppendResult/wasCreated`` false). The same `clientID` with another
    /// sender or body throws ``HistoryErrorCode/clientIDConflict``; a
    /// `replyTo` naming no message here throws ``HistoryErrorCode/replyToNotFound``.
    ///
    /// With a token, `sender` may be nil: the server takes the token's
    /// subject. Naming another sender throws ``HistoryErrorCode/senderMismatch``.
    public func append(to conversation: String, sender: String? = nil, body: String,
                       clientID: String? = nil, replyTo: Int64? = nil) async throws -> AppendResult {
        let payload = AppendBody(sender: sender, body: body, clientID: clientID, replyTo: replyTo)
        let endpoint = HistoryEndpoint(method: "POST", path: ["v1", "conversations", conversation, "messages"],
                                       body: try encode(payload))
        let (message, status) = try await send(endpoint, as: HistoryMessage.self)
        return AppendResult(message: message, wasCreated: status == 201)
    }

    /// `GET /v1/conversations/{id}/messages`: one page.
    public func page(of conversation: String, _ request: PageRequest = .newest()) async throws -> HistoryPage {
        let endpoint = HistoryEndpoint(method: "GET", path: ["v1", "conversations", conversation, "messages"],
                                       query: request.queryItems, revalidates: true)
        return try await send(endpoint, as: HistoryPage.self).value
    }

    /// `PATCH /v1/conversations/{id}/messages/{messageID}`: the message with
    /// `edited_at` set. A tombstone throws ``HistoryErrorCode/messageDeleted`` (409).
    public func edit(messageID: Int64, in conversation: String, body: String) async throws -> HistoryMessage {
        let endpoint = HistoryEndpoint(
            method: "PATCH", path: ["v1", "conversations", conversation, "messages", String(messageID)],
            body: try encode(EditBody(body: body)))
        return try await send(endpoint, as: HistoryMessage.self).value
    }

    /// `DELETE /v1/conversations/{id}/messages/{messageID}`: the tombstone.
    /// Deleting a tombstone again answers it unchanged.
    public func delete(messageID: Int64, in conversation: String) async throws -> HistoryMessage {
        let endpoint = HistoryEndpoint(
            method: "DELETE", path: ["v1", "conversations", conversation, "messages", String(messageID)])
        return try await send(endpoint, as: HistoryMessage.self).value
    }

    // MARK: - Events

    /// `GET /v1/conversations/{id}/events`: one answer of the change feed.
    ///
    /// With a `wait`, the request goes through the long-poll session, whose
    /// timeout is the contract's longest wait (60 s) plus
    /// ``HistoryClientConfiguration/longPollMargin`` (the request itself asks
    /// for `wait` plus the margin, which Darwin honours), so the server's
    /// empty answer at the end of the wait arrives before the client gives up.
    public func events(of conversation: String, _ query: EventQuery) async throws -> HistoryEventBatch {
        var endpoint = HistoryEndpoint(method: "GET", path: ["v1", "conversations", conversation, "events"],
                                       query: query.queryItems)
        if let wait = query.wait, wait > .zero {
            endpoint.timeout = Swift.min(wait, Self.maximumWait) + configuration.longPollMargin
        }
        return try await send(endpoint, as: HistoryEventBatch.self).value
    }

    /// Every change after `since`, forever: a Server-Sent Events stream or
    /// long-polls in a loop (``HistoryClientConfiguration/feedTransport``),
    /// follows `has_more` at once, waits out 429s, reconnects after failures with
    /// ``HistoryClientConfiguration/reconnect`` and resumes from the last
    /// version it saw, so no event is lost or repeated. It ends when the
    /// consuming task is cancelled.
    ///
    /// ```swift
    /// for try await event in client.events(of: "general", since: page.version) {
    ///     let changes = window.apply(event)
    /// }
    /// ```
    ///
    /// With `typing`, long-polls ask `typing=1` so that their answers say who
    /// is typing (streams always do); ``HistoryEventStream/batches`` yields
    /// each new list as a batch with ``HistoryEventBatch/typing`` set.
    public func events(of conversation: String, since version: Int64, minID: Int64? = nil,
                       maxID: Int64? = nil, limit: Int? = nil, typing: Bool = false) -> HistoryEventStream {
        let source = ConversationEventSource(conversation: conversation, minID: minID, maxID: maxID, limit: limit,
                                             typing: typing)
        return HistoryEventStream(plan: FeedPlan(client: self, source: source, since: version))
    }

    // MARK: - Transport

    func encode(_ value: some Encodable) throws -> Data {
        do {
            return try HistoryJSON.makeEncoder().encode(value)
        } catch {
            throw HistoryClientError.invalidRequest(reason: "cannot encode the body: \(error)")
        }
    }

    /// Performs the request and decodes a 2xx body as `T`.
    ///
    /// An endpoint that `revalidates` is asked with `If-None-Match` when an
    /// answer to it is held; a 304 returns that answer (status 304), a 200
    /// with an `ETag` is held for next time (``RevalidationCache``).
    func send<T: Decodable & Sendable>(_ endpoint: HistoryEndpoint, as type: T.Type) async throws
        -> (value: T, status: Int) {
        guard endpoint.revalidates, let answers else {
            let (data, response) = try await perform(endpoint)
            return (try Self.decode(T.self, from: data, status: response.statusCode), response.statusCode)
        }
        var endpoint = endpoint
        let key = endpoint.revalidationKey
        let held = answers.entry(for: key, as: T.self)
        if let held { endpoint.headers["If-None-Match"] = held.tag }
        let (data, response) = try await perform(endpoint)
        if response.statusCode == 304, let held {
            return (held.value, 304)
        }
        let value = try Self.decode(T.self, from: data, status: response.statusCode)
        if let tag = response.value(forHTTPHeaderField: "ETag") {
            answers.store(value, tag: tag, bytes: data.count, for: key)
        } else {
            answers.remove(key)
        }
        return (value, response.statusCode)
    }

    private static func decode<T: Decodable>(_ type: T.Type, from data: Data, status: Int) throws -> T {
        do {
            return try HistoryJSON.makeDecoder().decode(T.self, from: data)
        } catch {
            throw HistoryClientError.undecodableResponse(status: status, reason: "\(T.self): \(error)")
        }
    }

    /// Performs the request; returns the body of a 2xx answer (or of a 304
    /// to a request that carried `If-None-Match`) and throws
    /// ``HistoryClientError`` for anything else.
    ///
    /// With a token provider, a 401 `token_expired` gets one more token and
    /// one retry: a token can expire between the provider's answer and the
    /// server's check, and that race must not reach the app. A second 401
    /// is the app's to handle (its provider keeps returning stale tokens).
    func perform(_ endpoint: HistoryEndpoint) async throws -> (Data, HTTPURLResponse) {
        do {
            return try await performOnce(endpoint)
        } catch let error as HistoryClientError
            where error.code == .tokenExpired && configuration.tokenProvider != nil {
            return try await performOnce(endpoint)
        }
    }

    /// The token to send now, or nil without a provider.
    private func currentToken() async throws -> String? {
        guard let provider = configuration.tokenProvider else { return nil }
        do {
            return try await provider()
        } catch {
            if Task.isCancelled || error is CancellationError { throw CancellationError() }
            throw HistoryClientError.tokenUnavailable(error)
        }
    }

    /// One exchange with the server, with a token asked for just before.
    private func performOnce(_ endpoint: HistoryEndpoint) async throws -> (Data, HTTPURLResponse) {
        let request = try await urlRequest(for: endpoint)
        let data: Data
        let http: HTTPURLResponse
        do {
            (data, http) = try await transport.response(for: request, isLongPoll: endpoint.timeout != nil)
        } catch {
            throw Self.transportFailure(error)
        }
        let status = http.statusCode
        let revalidated = status == 304 && endpoint.headers["If-None-Match"] != nil
        guard (200..<300).contains(status) || revalidated else {
            throw Self.failure(status: status, body: data, response: http)
        }
        return (data, http)
    }

    /// The request for `endpoint` at the current base URL, with the
    /// configured headers and a token asked for just before.
    private func urlRequest(for endpoint: HistoryEndpoint) async throws -> URLRequest {
        var headers = configuration.additionalHeaders
        if !headers.keys.contains(where: { $0.lowercased() == "accept-encoding" }) {
            headers["Accept-Encoding"] = configuration.acceptsGzip ? "gzip" : "identity"
        }
        if let token = try await currentToken() {
            headers["Authorization"] = "Bearer " + token
        }
        return try endpoint.urlRequest(
            baseURL: baseURL, timeout: endpoint.timeout ?? configuration.requestTimeout, headers: headers)
    }

    /// A transport's error as the client reports it: cancellation stays cancellation.
    private static func transportFailure(_ error: any Error) -> any Error {
        if Task.isCancelled || error is CancellationError { return CancellationError() }
        if let urlError = error as? URLError, urlError.code == .cancelled { return CancellationError() }
        if let clientError = error as? HistoryClientError { return clientError }
        return HistoryClientError.transport(error)
    }

    /// A non-2xx answer as ``HistoryClientError``.
    private static func failure(status: Int, body data: Data, response http: HTTPURLResponse) -> HistoryClientError {
        guard let envelope = try? HistoryJSON.makeDecoder().decode(ErrorEnvelope.self, from: data) else {
            let text = String(decoding: data.prefix(200), as: UTF8.self)
            return HistoryClientError.undecodableResponse(
                status: status, reason: "not the contract's error body: \(text)")
        }
        return HistoryClientError.server(HistoryServerError(
            status: status, code: HistoryErrorCode(rawValue: envelope.error.code),
            message: envelope.error.message,
            retryAfter: HistoryServerError.parseRetryAfter(http.value(forHTTPHeaderField: "Retry-After"))))
    }

    /// Opens `endpoint` as a Server-Sent Events stream: a 2xx answer with
    /// `Content-Type: text/event-stream`, its body still arriving. A non-2xx
    /// answer throws as ``perform(_:)`` would (with the same one retry after
    /// 401 `token_expired`); a 2xx answer of another type, or a transport
    /// that cannot stream, throws ``HistoryClientError/streamingUnavailable(reason:)``.
    func openStream(_ endpoint: HistoryEndpoint) async throws -> HistoryStreamingResponse {
        do {
            return try await openStreamOnce(endpoint)
        } catch let error as HistoryClientError
            where error.code == .tokenExpired && configuration.tokenProvider != nil {
            return try await openStreamOnce(endpoint)
        }
    }

    private func openStreamOnce(_ endpoint: HistoryEndpoint) async throws -> HistoryStreamingResponse {
        var endpoint = endpoint
        endpoint.headers["Accept"] = "text/event-stream"
        endpoint.headers["Cache-Control"] = "no-cache"
        endpoint.timeout = endpoint.timeout ?? configuration.streamIdleTimeout
        let request = try await urlRequest(for: endpoint)
        let stream: HistoryStreamingResponse
        do {
            stream = try await transport.streamingResponse(for: request)
        } catch {
            throw Self.transportFailure(error)
        }
        let status = stream.response.statusCode
        guard (200..<300).contains(status) else {
            // An error answer is small (the contract's error body): read it whole, bounded.
            var body = Data()
            do {
                for try await chunk in stream.body {
                    body.append(chunk)
                    if body.count > 65_536 { break }
                }
            } catch {
                stream.cancel()
                throw Self.transportFailure(error)
            }
            stream.cancel()
            throw Self.failure(status: status, body: body, response: stream.response)
        }
        let type = stream.response.value(forHTTPHeaderField: "Content-Type") ?? ""
        guard type.lowercased().hasPrefix("text/event-stream") else {
            stream.cancel()
            throw HistoryClientError.streamingUnavailable(reason: "the server answered \(status) \(type), not text/event-stream")
        }
        return stream
    }
}

// MARK: - Request bodies

private struct CreateConversationBody: Encodable {
    var id: String?
    var title: String?
}

private struct AppendBody: Encodable {
    /// Left out of the JSON when nil (the synthesized `encodeIfPresent`).
    var sender: String?
    var body: String
    var clientID: String?
    var replyTo: Int64?

    enum CodingKeys: String, CodingKey {
        case sender
        case body
        case clientID = "client_id"
        case replyTo = "reply_to"
    }
}

private struct EditBody: Encodable {
    var body: String
}
