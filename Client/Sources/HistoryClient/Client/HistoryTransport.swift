import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How a ``ChatHistoryClient`` exchanges one request with the server.
///
/// The client builds every `URLRequest` (route, query, body, token) and reads
/// every answer (status, error body, `Retry-After`); a transport only carries
/// bytes. Apps inject their own to test a screen without a server (answer
/// canned pages, fail the third request, delay one), or to share an existing
/// `URLSession`:
///
/// ```swift
/// struct CannedTransport: HistoryTransport {
///     func response(for request: URLRequest, isLongPoll: Bool) async throws -> (Data, HTTPURLResponse) {
///         let body = Data(#"{"messages":[],"has_older":false,"has_newer":false,"version":0}"#.utf8)
///         return (body, HTTPURLResponse(url: request.url!, statusCode: 200, httpVersion: nil, headerFields: nil)!)
///     }
/// }
/// let client = ChatHistoryClient(baseURL: url, transport: CannedTransport())
/// ```
///
/// Throw `URLError` (or any error) for "no answer": the client reports it as
/// ``HistoryClientError/transport(_:)``, which feeds and the outbox retry.
public protocol HistoryTransport: Sendable {
    /// One exchange. `isLongPoll` marks a request that the server may park up
    /// to the contract's longest wait (60 s) plus the configured margin; its
    /// `timeoutInterval` already says so.
    func response(for request: URLRequest, isLongPoll: Bool) async throws -> (Data, HTTPURLResponse)
}

/// The default transport: two `URLSession`s without caches, one for ordinary
/// requests and one for long-polls.
///
/// Two because swift-corelibs-foundation applies the session's
/// `timeoutIntervalForRequest` whatever a request asks for, so one session
/// cannot serve a 15 s and a 70 s limit.
public final class URLSessionTransport: HistoryTransport {
    private let session: URLSession
    private let longPollSession: URLSession

    /// - Parameters:
    ///   - requestTimeout: the limit of ordinary requests.
    ///   - longPollTimeout: the limit of long-polls: the longest wait plus a margin.
    public init(requestTimeout: Duration = .seconds(15), longPollTimeout: Duration = .seconds(70)) {
        session = Self.makeSession(timeout: requestTimeout)
        longPollSession = Self.makeSession(timeout: longPollTimeout)
    }

    /// Uses `session` for every request (its timeouts must allow long-polls).
    public init(session: URLSession) {
        self.session = session
        self.longPollSession = session
    }

    private static func makeSession(timeout: Duration) -> URLSession {
        let sessionConfiguration = URLSessionConfiguration.ephemeral
        // Pages and events change under the same URL; a cached answer would be a stale screen.
        sessionConfiguration.urlCache = nil
        sessionConfiguration.requestCachePolicy = .reloadIgnoringLocalCacheData
        sessionConfiguration.timeoutIntervalForRequest = timeout.seconds
        // Only bounds a transfer that trickles forever.
        sessionConfiguration.timeoutIntervalForResource = timeout.seconds * 4
        return URLSession(configuration: sessionConfiguration)
    }

    deinit {
        session.finishTasksAndInvalidate()
        if longPollSession !== session { longPollSession.finishTasksAndInvalidate() }
    }

    public func response(for request: URLRequest, isLongPoll: Bool) async throws -> (Data, HTTPURLResponse) {
        let (data, response) = try await (isLongPoll ? longPollSession : session).data(for: request)
        guard let http = response as? HTTPURLResponse else {
            throw URLError(.badServerResponse)
        }
        return (data, http)
    }
}
