import Dispatch
import HTTPCore
import HistoryAPI
import HistoryStore
import HistoryTestSupport

/// Runs `body` with an HTTP server on a loopback port over `store` (an
/// `APIResponder` with the read pool's `readThreads`), for the tests that
/// shape the server's threads themselves. `beforeShutdown` runs first when
/// `body` ends (a gated store opens its gate there, so that no read holds
/// the shutdown); then the server shuts down and the read pool stops.
func withInProcessServer<T>(_ store: any HistoryStore, readThreads: Int = 4,
                            threadCount: Int = HTTPServerConfiguration.processorCount + 4,
                            blockingThreadLimit: Int? = nil,
                            beforeShutdown: () -> Void = {},
                            _ body: (_ port: Int, _ api: APIResponder) throws -> T) throws -> T {
    let api = APIResponder(store: store, metrics: Metrics(), logger: Logger(level: .error), accessLog: nil,
                           readThreads: readThreads)
    let server = HTTPServer(configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0, threadCount: threadCount,
                                                                   blockingThreadLimit: blockingThreadLimit),
                            responder: api, observer: api)
    try server.start()
    defer {
        beforeShutdown()
        let done = DispatchSemaphore(value: 0)
        server.shutdown(gracePeriod: .seconds(2)) { done.signal() }
        done.wait()
        api.stopReadPool()
    }
    return try body(server.port, api)
}
