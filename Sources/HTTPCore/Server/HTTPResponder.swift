import Dispatch

/// What a responder does with a request: answer it now, or promise to.
public enum HTTPResponderResult: Sendable {
    /// The answer, written by the thread that called the responder: what
    /// it decided at once (a refusal, a 404, memory-only work, a read it
    /// was allowed to block for).
    case response(HTTPResponse)
    /// The answer comes later, through `respond`, exactly once.
    case later
}

/// What the server calls for every complete request.
///
/// The handler runs on one of the server's worker threads, which serve
/// every connection between them: it must not block, except inside
/// `context.whileBlockingAllowed` (a store read), which the server allows
/// on only some of its threads at once. It answers at once by returning
/// `.response`, or later (an append waiting for its group commit, a
/// long-poll for a change, a read handed to another thread) by returning
/// `.later` and then calling `respond` exactly once, from any thread. The
/// connection keeps pipelined requests behind it until then, so answers
/// stay in order.
public protocol HTTPResponder: Sendable {
    func handle(_ request: HTTPRequest, context: any RequestContext,
                respond: @escaping @Sendable (HTTPResponse) -> Void) -> HTTPResponderResult

    /// The answer to a failure the HTTP layer meets before any route (a
    /// malformed request, a refused connection). Called on a server thread;
    /// must return at once.
    func errorResponse(for failure: HTTPFailure) -> HTTPResponse
}

/// What a handler may learn about, or ask of, the connection a request came on.
public protocol RequestContext: Sendable {
    /// `host:port` of the peer, for logs.
    var remoteAddress: String { get }
    /// Runs `handler` once if the connection closes before the response is
    /// written (the client went away, or the server shut down); a parked
    /// long-poll uses it to stop waiting. Runs at once if already closed.
    func onClose(_ handler: @escaping @Sendable () -> Void)

    /// Runs `body`, which may block (a store read), on this thread, and
    /// returns its result, when the server lets one more of its threads
    /// block now; nil without running it otherwise (the caller then hands
    /// the work to a thread of its own). A thread that runs a request to
    /// its end costs no hand-off; the limit keeps threads free for
    /// everyone else while slow reads hold some.
    func whileBlockingAllowed<T>(_ body: () throws -> T) rethrows -> T?
}

extension RequestContext {
    /// Contexts outside the server's threads never allow blocking.
    public func whileBlockingAllowed<T>(_ body: () throws -> T) rethrows -> T? { nil }
}

/// What the server reports as it runs: the feed of the access log and the
/// metrics. Calls come from many threads and must return quickly.
public protocol HTTPServerObserver: Sendable {
    /// A response was written (including the server's own 4xx for bad bytes).
    func exchangeCompleted(_ exchange: HTTPExchange)
    /// The number of open client connections changed.
    func openConnectionsChanged(to count: Int)
}

/// One request and its answer, as logged.
public struct HTTPExchange: Sendable {
    public var method: String
    public var target: String
    public var status: Int
    /// Body bytes written.
    public var bytes: Int
    /// From the request's first byte to the response's last byte written to the socket buffer.
    public var microseconds: Int
    /// `HTTPResponse.route`, or nil for answers made by the HTTP layer itself.
    public var route: String?
    /// Who asked: `HTTPResponse.client`, else the peer's address without
    /// the port; `-` when unknown.
    public var client: String

    public init(method: String, target: String, status: Int, bytes: Int, microseconds: Int, route: String?,
                client: String = "-") {
        self.client = client
        self.method = method
        self.target = target
        self.status = status
        self.bytes = bytes
        self.microseconds = microseconds
        self.route = route
    }
}
