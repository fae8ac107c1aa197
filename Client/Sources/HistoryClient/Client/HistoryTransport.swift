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

    /// One exchange whose body is handed over as it arrives: a Server-Sent
    /// Events stream that stays open for an hour. Returns once the status
    /// and headers are in. The default throws
    /// ``HistoryClientError/streamingUnavailable(reason:)``, which feeds in
    /// ``FeedTransport/automatic`` take as "use long-polls".
    func streamingResponse(for request: URLRequest) async throws -> HistoryStreamingResponse
}

extension HistoryTransport {
    public func streamingResponse(for request: URLRequest) async throws -> HistoryStreamingResponse {
        throw HistoryClientError.streamingUnavailable(reason: "\(Self.self) does not deliver bodies as they arrive")
    }
}

/// An answer whose body is still arriving: the status and headers, the
/// body's bytes in the chunks the network delivered them, and how to hang up.
public struct HistoryStreamingResponse: Sendable {
    public var response: HTTPURLResponse
    /// Ends when the server closes the response; throws when the connection fails.
    public var body: AsyncThrowingStream<Data, any Error>
    /// Closes the connection (the body then ends).
    public var cancel: @Sendable () -> Void

    public init(response: HTTPURLResponse, body: AsyncThrowingStream<Data, any Error>,
                cancel: @escaping @Sendable () -> Void) {
        self.response = response
        self.body = body
        self.cancel = cancel
    }
}

/// The default transport: three `URLSession`s without caches, one for
/// ordinary requests, one for long-polls and one for event streams.
///
/// Several because swift-corelibs-foundation applies the session's
/// `timeoutIntervalForRequest` whatever a request asks for, so one session
/// cannot serve a 15 s and a 70 s limit. The stream session has a delegate:
/// `URLSession.bytes(for:)` does not exist in swift-corelibs-foundation,
/// while a data delegate's `didReceive data` delivers each chunk as it
/// arrives on Darwin and Linux alike. Its request timeout is an idle limit
/// (it restarts with every chunk), so a stream lives as long as the server
/// keeps talking or sending heartbeats.
public final class URLSessionTransport: HistoryTransport {
    private let session: URLSession
    private let longPollSession: URLSession
    private let streamSession: URLSession
    private let streams = StreamingDelegate()

    /// - Parameters:
    ///   - requestTimeout: the limit of ordinary requests.
    ///   - longPollTimeout: the limit of long-polls: the longest wait plus a margin.
    ///   - streamIdleTimeout: how long an event stream may stay silent.
    public init(requestTimeout: Duration = .seconds(15), longPollTimeout: Duration = .seconds(70),
                streamIdleTimeout: Duration = .seconds(45)) {
        session = Self.makeSession(timeout: requestTimeout)
        longPollSession = Self.makeSession(timeout: longPollTimeout)
        streamSession = URLSession(configuration: Self.makeConfiguration(timeout: streamIdleTimeout, resource: .seconds(86_400)),
                                   delegate: streams, delegateQueue: nil)
    }

    /// Uses `session` for every request (its timeouts must allow long-polls),
    /// and a session with its configuration for event streams.
    public init(session: URLSession) {
        self.session = session
        self.longPollSession = session
        self.streamSession = URLSession(configuration: session.configuration, delegate: streams, delegateQueue: nil)
    }

    private static func makeSession(timeout: Duration) -> URLSession {
        URLSession(configuration: makeConfiguration(timeout: timeout, resource: timeout * 4))
    }

    private static func makeConfiguration(timeout: Duration, resource: Duration) -> URLSessionConfiguration {
        let sessionConfiguration = URLSessionConfiguration.ephemeral
        // Pages and events change under the same URL; a cached answer would be a stale screen.
        sessionConfiguration.urlCache = nil
        sessionConfiguration.requestCachePolicy = .reloadIgnoringLocalCacheData
        sessionConfiguration.timeoutIntervalForRequest = timeout.seconds
        // Only bounds a transfer that trickles forever.
        sessionConfiguration.timeoutIntervalForResource = resource.seconds
        return sessionConfiguration
    }

    deinit {
        session.finishTasksAndInvalidate()
        if longPollSession !== session { longPollSession.finishTasksAndInvalidate() }
        // Off the releasing thread: swift-corelibs-foundation waits on the
        // session's work queue, which may be busy with this session's streams.
        let streamSession = self.streamSession
        DispatchQueue.global().async { streamSession.invalidateAndCancel() }
    }

    public func streamingResponse(for request: URLRequest) async throws -> HistoryStreamingResponse {
        let (body, continuation) = AsyncThrowingStream<Data, any Error>.makeStream()
        let task = streamSession.dataTask(with: request)
        let handle = TaskHandle(task)
        continuation.onTermination = { _ in handle.cancel() }
        let response = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (opened: CheckedContinuation<HTTPURLResponse, any Error>) in
                streams.register(task.taskIdentifier, opened: opened, body: continuation)
                if handle.isCancelled {
                    streams.abandon(task.taskIdentifier)
                } else {
                    task.resume()
                }
            }
        } onCancel: {
            handle.cancel()
        }
        return HistoryStreamingResponse(response: response, body: body, cancel: { handle.cancel() })
    }

    /// A completion-handler task, not `URLSession.data(for:)`: in
    /// swift-corelibs-foundation, cancelling the Swift task awaiting
    /// `data(for:)` calls `URLSessionTask.cancel()` inside the task's
    /// cancellation handler, which holds the task's status lock while
    /// `cancel()` waits on the session's work queue; if that queue is then
    /// resuming the same task (the answer arrived), it waits for the status
    /// lock, and both threads stop for good (seen in a test run: a screen
    /// closed while its page request completed). Here the cancel goes to
    /// another queue (`TaskHandle`), so no lock is held while it waits.
    public func response(for request: URLRequest, isLongPoll: Bool) async throws -> (Data, HTTPURLResponse) {
        let session = isLongPoll ? longPollSession : session
        let box = TaskBox()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (answered: CheckedContinuation<(Data, HTTPURLResponse), any Error>) in
                let task = session.dataTask(with: request) { data, response, error in
                    if let error {
                        answered.resume(throwing: error)
                    } else if let http = response as? HTTPURLResponse {
                        answered.resume(returning: (data ?? Data(), http))
                    } else {
                        answered.resume(throwing: URLError(.badServerResponse))
                    }
                }
                let handle = TaskHandle(task)
                if box.set(handle) {
                    task.resume()
                } else {
                    // Cancelled before it started: never started, answered as cancelled.
                    answered.resume(throwing: CancellationError())
                }
            }
        } onCancel: {
            box.cancel()
        }
    }
}

/// A data task to cancel from any thread, once.
///
/// `cancel()` hands the call to another queue: it is called from a task's
/// cancellation handler and from the body stream's termination (which may
/// run inside a delegate callback), and swift-corelibs-foundation's
/// `cancel()` waits on the session's work queue, so calling it there could
/// block a thread of the concurrency pool, or the delegate queue, on work
/// that needs it.
///
/// The use of `@unchecked Sendable` is safe for this type because `task`
/// is a `let` whose one method used here, `cancel()`, is documented
/// thread-safe, and `cancelled` is read and written only inside `lock`.
private final class TaskHandle: @unchecked Sendable {
    private let task: URLSessionDataTask
    private let lock = NSLock()
    private var cancelled = false

    init(_ task: URLSessionDataTask) {
        self.task = task
    }

    var isCancelled: Bool {
        lock.lock()
        defer { lock.unlock() }
        return cancelled
    }

    func cancel() {
        lock.lock()
        let first = !cancelled
        cancelled = true
        lock.unlock()
        guard first else { return }
        let task = self.task
        DispatchQueue.global().async { task.cancel() }
    }
}

/// The data task of one `response(for:)` call, which its cancellation
/// handler may reach before or after the task exists.
///
/// The use of `@unchecked Sendable` is safe for this type because its
/// mutable state is read and written only inside `lock`.
private final class TaskBox: @unchecked Sendable {
    private let lock = NSLock()
    private var handle: TaskHandle?
    private var cancelled = false

    /// Keeps the task; false when the call was already cancelled.
    func set(_ handle: TaskHandle) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard !cancelled else { return false }
        self.handle = handle
        return true
    }

    func cancel() {
        lock.lock()
        cancelled = true
        let handle = self.handle
        lock.unlock()
        handle?.cancel()
    }
}

/// The stream session's delegate: hands each task's response to the
/// waiting call, then its chunks to the body's stream.
///
/// The use of `@unchecked Sendable` is safe for this type because its only
/// mutable state, `open`, is read and written only inside `lock`.
private final class StreamingDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private struct OpenStream {
        var opened: CheckedContinuation<HTTPURLResponse, any Error>?
        let body: AsyncThrowingStream<Data, any Error>.Continuation
    }

    private let lock = NSLock()
    private var open: [Int: OpenStream] = [:]

    func register(_ id: Int, opened: CheckedContinuation<HTTPURLResponse, any Error>,
                  body: AsyncThrowingStream<Data, any Error>.Continuation) {
        lock.lock()
        open[id] = OpenStream(opened: opened, body: body)
        lock.unlock()
    }

    /// A task cancelled before it started: never resumed, so no callback
    /// will come; its waiters end here.
    func abandon(_ id: Int) {
        lock.lock()
        let stream = open.removeValue(forKey: id)
        lock.unlock()
        stream?.opened?.resume(throwing: CancellationError())
        stream?.body.finish(throwing: CancellationError())
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
        lock.lock()
        let opened = open[dataTask.taskIdentifier]?.opened
        open[dataTask.taskIdentifier]?.opened = nil
        lock.unlock()
        if let http = response as? HTTPURLResponse {
            opened?.resume(returning: http)
            completionHandler(.allow)
        } else {
            opened?.resume(throwing: URLError(.badServerResponse))
            completionHandler(.cancel)
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        lock.lock()
        let body = open[dataTask.taskIdentifier]?.body
        lock.unlock()
        body?.yield(data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        lock.lock()
        let stream = open.removeValue(forKey: task.taskIdentifier)
        lock.unlock()
        if let opened = stream?.opened {
            opened.resume(throwing: error ?? URLError(.badServerResponse))
        }
        if let error {
            stream?.body.finish(throwing: error)
        } else {
            stream?.body.finish()
        }
    }
}
