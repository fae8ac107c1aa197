import Dispatch
import Foundation
import HistoryTestSupport
import Synchronization
@testable import HTTPCore

/// A responder for loopback tests, routing on the path:
/// - `/echo`: the request body back, method and target in `X-Method` / `X-Target`;
/// - `/slow?ms=N`: answers `slow N` after N ms, from another queue;
/// - `/busy?ms=N`: answers at once after N ms of work on the handler's own
///   thread, as a route doing a synchronous read does;
/// - `/big?n=N`: N bytes of body;
/// - `/hold`: answers only when its `onClose` handler runs, and counts those runs;
/// - `/deferred`: answers when the test calls `releaseDeferred()`, all at once
///   from the test's thread (a burst of answers that come from elsewhere);
/// - `/blocking`: blocks its thread as a read does (`whileBlockingAllowed`)
///   until the test calls `openBlocking()`; 503 when no thread may block;
/// - `/policy`: `batch` or `other`, the scheduling policy of the thread
///   that handles it (`ThreadScheduling`);
/// - anything else: `METHOD target` as the body.
final class TestResponder: HTTPResponder {
    let closeHandlersRun = Mutex(0)
    let handled = Mutex(0)
    private let deferred = Mutex<[@Sendable (HTTPResponse) -> Void]>([])
    private let blockingGate = DispatchSemaphore(value: 0)
    let blockedCount = Atomic(0)
    /// `/busy` handlers running now.
    let busyNow = Atomic(0)

    /// How many `/deferred` requests wait for `releaseDeferred()`.
    var deferredCount: Int { deferred.withLock { $0.count } }

    /// Answers every waiting `/deferred` request, in arrival order.
    func releaseDeferred() {
        let waiting = deferred.withLock { waiting in
            defer { waiting = [] }
            return waiting
        }
        for (index, respond) in waiting.enumerated() {
            respond(HTTPResponse(status: .ok, body: Array("deferred \(index)".utf8), route: "deferred"))
        }
    }

    /// Lets every `/blocking` request that blocks now, or will, go on.
    func openBlocking() {
        for _ in 0..<64 { blockingGate.signal() }
    }

    func handle(_ request: HTTPRequest, context: any RequestContext,
                respond: @escaping @Sendable (HTTPResponse) -> Void) -> HTTPResponderResult {
        handled.withLock { $0 += 1 }
        switch request.path {
        case "/echo":
            return .response(HTTPResponse(status: .ok, headers: ["X-Method": request.method.rawValue, "X-Target": request.target],
                                 body: request.body, route: "echo"))
        case "/slow":
            let milliseconds = Int(request.query?.split(separator: "=").last ?? "100") ?? 100
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(milliseconds)) {
                respond(HTTPResponse(status: .ok, body: Array("slow \(milliseconds)".utf8), route: "slow"))
            }
            return .later
        case "/policy":
            let policy = ThreadScheduling.isBatch(threadID: 0) == true ? "batch" : "other"
            return .response(HTTPResponse(status: .ok, body: Array(policy.utf8), route: "policy"))
        case "/busy":
            let milliseconds = Int(request.query?.split(separator: "=").last ?? "5") ?? 5
            busyNow.add(1, ordering: .relaxed)
            Thread.sleep(forTimeInterval: Double(milliseconds) / 1000)
            busyNow.subtract(1, ordering: .relaxed)
            return .response(HTTPResponse(status: .ok, body: Array("busy \(milliseconds)".utf8), route: "busy"))
        case "/big":
            let count = Int(request.query?.split(separator: "=").last ?? "0") ?? 0
            return .response(HTTPResponse(status: .ok, body: [UInt8](repeating: UInt8(ascii: "x"), count: count), route: "big"))
        case "/hold":
            // Like a long-poll: it answers when told that its client left.
            context.onClose { [self] in
                closeHandlersRun.withLock { $0 += 1 }
                respond(HTTPResponse(status: .ok, body: Array("released".utf8), route: "hold"))
            }
            return .later
        case "/deferred":
            deferred.withLock { $0.append(respond) }
            return .later
        case "/blocking":
            let blocked: Void? = context.whileBlockingAllowed {
                blockedCount.add(1, ordering: .relaxed)
                blockingGate.wait()
            }
            guard blocked != nil else {
                return .response(HTTPResponse(status: .serviceUnavailable, body: Array("no thread may block".utf8), route: "blocking"))
            }
            return .response(HTTPResponse(status: .ok, body: Array("unblocked".utf8), route: "blocking"))
        default:
            return .response(HTTPResponse(status: .ok, body: Array("\(request.method) \(request.target)".utf8), route: "default"))
        }
    }
}

extension TestResponder {
    /// Names the failure, so a test sees which one the server asked to
    /// render; the contract's error body is the API layer's to write.
    func errorResponse(for failure: HTTPFailure) -> HTTPResponse {
        HTTPResponse(status: failure.status, headers: ["Content-Type": "text/plain"], body: Array("\(failure)".utf8))
    }
}

/// Records what the server reports.
final class RecordingObserver: HTTPServerObserver {
    let exchanges = Mutex<[HTTPExchange]>([])
    let counts = Mutex<[Int]>([])

    func exchangeCompleted(_ exchange: HTTPExchange) { exchanges.withLock { $0.append(exchange) } }
    func openConnectionsChanged(to count: Int) { counts.withLock { $0.append(count) } }
}

/// The bare HTTP layer on 127.0.0.1 and an ephemeral port, serving
/// `TestResponder`, shut down afterwards: HTTP behaviour without the history
/// application (for which `withRunningServer` starts the whole server).
struct LoopbackServer {
    let host: String
    let server: HTTPServer
    let responder: TestResponder
    let observer: RecordingObserver

    var port: Int { server.port }

    func client(timeout: Duration = .seconds(5)) throws -> HTTPClientConnection {
        try HTTPClientConnection(port: port, timeout: timeout)
    }

    /// Two clients that hold the server up as badly as they can (see
    /// `stalledClients(host:port:unreadTarget:)`): the unread answer is 20 MB.
    func stalledClients() throws -> [HTTPClientConnection] {
        try HistoryTestSupport.stalledClients(host: host, port: port, unreadTarget: "/big?n=20000000")
    }

    func eventually(within limit: Duration = .seconds(60), _ condition: () -> Bool) -> Bool {
        HistoryTestSupport.eventually(within: limit, condition)
    }
}

func withLoopbackServer<R>(limits: HTTPLimits = HTTPLimits(), maximumConnections: Int = 10_000,
                           host: String = "127.0.0.1",
                           threadCount: Int = HTTPServerConfiguration.processorCount + 4,
                           blockingThreadLimit: Int? = nil,
                           _ body: (LoopbackServer) throws -> R) throws -> R {
    let responder = TestResponder()
    let observer = RecordingObserver()
    let configuration = HTTPServerConfiguration(host: host, port: 0, maximumConnections: maximumConnections,
                                                limits: limits, threadCount: threadCount,
                                                blockingThreadLimit: blockingThreadLimit)
    let server = HTTPServer(configuration: configuration, responder: responder, observer: observer)
    try server.start()
    defer { shutdownAndWait(server, grace: .milliseconds(100)) }
    return try body(LoopbackServer(host: host, server: server, responder: responder, observer: observer))
}

/// Shuts the server down and waits (bounded) for the completion.
@discardableResult
func shutdownAndWait(_ server: HTTPServer, grace: Duration) -> Bool {
    let done = DispatchSemaphore(value: 0)
    server.shutdown(gracePeriod: grace) { done.signal() }
    return done.wait(timeout: .now() + .seconds(10)) == .success
}

func get(_ target: String, headers: HTTPHeaders = [:]) -> HTTPRequest {
    HTTPRequest(method: .get, target: target, headers: headers)
}
