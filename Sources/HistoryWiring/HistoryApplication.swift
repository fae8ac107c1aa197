import Dispatch
import HTTPCore
import HistoryAPI
import HistoryAccess
import HistoryPostgres
import HistoryStore
import HistorySQLite
import HostResources

/// The whole server, wired: store, API, HTTP server, metrics and logs.
///
/// `history-server`'s `main.swift` runs one; tests start one in-process on
/// port 0 over a store in a temporary folder, so they exercise exactly what
/// ships.
///
/// ```swift
/// let app = try HistoryApplication(configuration: ServerConfiguration(port: 0, databasePath: path))
/// try app.start()
/// print(app.port)
/// app.shutdown { /* closed */ }
/// ```
public final class HistoryApplication: Sendable {
    public static let version = "1.0.0"

    public let configuration: ServerConfiguration
    /// How many threads serve and read, for the start-up log.
    private let threadSizing: String
    public let store: any HistoryStore
    public let metrics: Metrics
    public let logger: Logger
    private let responder: APIResponder
    private let accessLog: AccessLog?
    private let server: HTTPServer
    /// Open or tokens, for the start-up line: who may connect depends on it.
    private let accessModeName: String

    /// Loads the token keys, then opens the store (creating and migrating
    /// it when needed); does not listen yet.
    /// - Throws: `StartupError.configuration` when a key cannot be loaded or
    ///   the bind needs keys (exit status 2), `.store` when the database
    ///   cannot be opened.
    public init(configuration: ServerConfiguration, logger: Logger? = nil) throws(StartupError) {
        let logger = logger ?? Logger(level: configuration.logLevel)
        let access: AccessMode
        do {
            access = try AccessMode(configuration)
        } catch {
            throw .configuration(error)
        }
        accessModeName = access.isOpen ? "open" : "tokens"
        if let secretFile = configuration.jwtHS256SecretFile,
           let warning = TokenKeys.permissionWarning(hs256SecretFile: secretFile) {
            logger.warning(warning)
        }
        if access.isOpen && !AccessMode.isLoopback(host: configuration.host) {
            logger.warning("--insecure-no-auth: every request on \(configuration.host) acts as an administrator, without a token")
        }
        let browser = BrowserSafety(loopbackBind: AccessMode.isLoopback(host: configuration.host),
                                    allowedHosts: configuration.allowedHosts, corsOrigins: configuration.corsOrigins)
        let metrics = Metrics()
        let store: any HistoryStore
        let readerCount: Int
        do {
            (store, readerCount) = try Self.openStore(configuration, metrics: metrics, logger: logger)
        } catch {
            throw .store(error)
        }
        let accessLog = configuration.accessLog ? AccessLog() : nil
        let responder = APIResponder(store: store, metrics: metrics, logger: logger, accessLog: accessLog,
                                     access: access, browser: browser,
                                     limits: configuration.clientLimits(tokensMode: !access.isOpen),
                                     clients: ClientAddressing(
                                        trustedProxies: configuration.trustedProxies,
                                        refusesForwardedRequests: access.isOpen && !configuration.insecureNoAuth),
                                     readThreads: readerCount,
                                     webViewer: configuration.webViewer ? WebViewer() : nil,
                                     feeds: configuration.feedSettings,
                                     newestPageCacheBytes: configuration.newestPageCacheBytes)
        let httpConfiguration = HTTPServerConfiguration(host: configuration.host, port: configuration.port,
                                                        maximumConnections: configuration.maximumConnections,
                                                        maximumConnectionsPerPeer: configuration.maximumConnectionsPerClient,
                                                        uncappedPeers: configuration.trustedProxies,
                                                        limits: HTTPLimits(writeTimeout: configuration.writeTimeout),
                                                        // As many threads may block in a read as the
                                                        // store has readers, and one per core never does.
                                                        threadCount: HTTPServerConfiguration.processorCount + readerCount,
                                                        blockingThreadLimit: readerCount)
        threadSizing = "\(httpConfiguration.threadCount) HTTP threads, \(readerCount) store readers"
        self.configuration = configuration
        self.store = store
        self.metrics = metrics
        self.logger = logger
        self.responder = responder
        self.accessLog = accessLog
        self.server = HTTPServer(configuration: httpConfiguration, responder: responder, observer: responder)
    }

    /// A SQLite file, or a PostgreSQL database when `--database` is a
    /// `postgres://` or `postgresql://` URI (one any number of instances
    /// may share). Also how many reads it serves at once: the read pool's size.
    private static func openStore(_ configuration: ServerConfiguration, metrics: Metrics,
                                  logger: Logger) throws(StoreError) -> (store: any HistoryStore, readerCount: Int) {
        let onBatchCommitted: @Sendable (Int) -> Void = { size in metrics.recordBatch(size: size) }
        let onWarning: @Sendable (String) -> Void = { message in logger.warning(message) }
        if PostgresStoreConfiguration.isPostgresURI(configuration.databasePath) {
            var postgres = PostgresStoreConfiguration(
                uri: configuration.databasePath, onBatchCommitted: onBatchCommitted,
                onPageStatement: { pages in metrics.recordPageStatement(pages: pages) }, onWarning: onWarning)
            if let readers = configuration.readConnections { postgres.readerCount = readers }
            return (try PostgresHistoryStore(configuration: postgres), postgres.readerCount)
        }
        var sqlite = SQLiteStoreConfiguration(
            path: configuration.databasePath, durability: configuration.durability,
            onBatchCommitted: onBatchCommitted, onWarning: onWarning)
        if let readers = configuration.readConnections { sqlite.readerCount = readers }
        return (try SQLiteHistoryStore(configuration: sqlite), sqlite.readerCount)
    }

    /// Binds and listens; returns once connections are accepted.
    /// - Throws: the HTTP server's error when the address cannot be bound;
    ///   the store is closed then.
    public func start() throws {
        do {
            try server.start()
        } catch {
            store.close()
            throw error
        }
        logger.debug("listening on \(address)")
        // What the threads were sized by: in a container, its CPU limit,
        // not the host's cores (`AvailableProcessors`).
        logger.info("\(AvailableProcessors.explanation): \(threadSizing)")
    }

    /// The bound port (the real one when configured with 0).
    public var port: Int { server.port }

    /// Client connections open now.
    public var openConnectionCount: Int { server.openConnectionCount }

    /// Long-polls parked now.
    public var parkedLongPollCount: Int { responder.parkedLongPollCount }

    /// How many times a woken long-poll read the store again since start.
    public var longPollRereadCount: Int { responder.longPollRereadCount }

    /// Requests waiting for a read-pool thread now.
    public var readPoolQueuedCount: Int { responder.readPoolQueuedCount }

    /// `http://host:port`, IPv6 literals in brackets.
    public var address: String {
        let host = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
        return "http://\(host):\(port)"
    }

    /// The one line `history-server` prints when it is ready; it says the
    /// mode, since an open-mode server gives every caller admin rights.
    public var startupLine: String {
        "history-server \(Self.version) listening on \(address) in \(accessModeName) mode, database \(configuration.displayedDatabase)"
    }

    /// Graceful stop: stop accepting and close idle connections; answer
    /// every parked long-poll; let requests in flight finish within
    /// `gracePeriod`; then close the store (finishing queued writes) and
    /// flush the access log. `completion` runs once, when all of it is done.
    public func shutdown(gracePeriod: Duration = .seconds(5), completion: @escaping @Sendable () -> Void) {
        logger.info("shutting down: draining for at most \(gracePeriod)")
        server.shutdown(gracePeriod: gracePeriod) { [store, accessLog, logger, responder] in
            // Queued reads finish (their connections are closed) before the store closes.
            responder.stopReadPool()
            store.close()
            accessLog?.flushAndWait()
            logger.info("stopped")
            completion()
        }
        // After the server stopped accepting, so these answers carry `Connection: close`.
        responder.drainLongPolls()
    }

    /// Blocking form of `shutdown`, for tests and `main`.
    public func shutdownAndWait(gracePeriod: Duration = .seconds(5)) {
        let done = DispatchSemaphore(value: 0)
        shutdown(gracePeriod: gracePeriod) { done.signal() }
        done.wait()
    }
}

/// Why `HistoryApplication` could not be built.
public enum StartupError: Error, CustomStringConvertible {
    /// A setting the server cannot use: exit status 2, like a bad flag.
    case configuration(AccessSetupError)
    /// The database cannot be opened: exit status 1.
    case store(StoreError)

    public var description: String {
        switch self {
        case .configuration(let error): error.message
        case .store(let error): "\(error)"
        }
    }
}
