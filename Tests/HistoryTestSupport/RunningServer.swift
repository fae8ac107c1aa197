import Foundation
import HTTPCore
import HistoryAPI
import HistoryClient
import HistoryStore
import HistorySQLite
import HistoryWiring

/// The whole history server in-process on 127.0.0.1 and a free port, over a
/// real SQLite file in a temporary folder (or, with `HISTORY_TEST_STORE=postgres`,
/// a new database in the process's PostgreSQL cluster: `serverDatabase(in:)`),
/// with a `ChatHistoryClient` pointed at it; made by `withRunningServer`.
///
/// `restart()` stops it (gracefully, as SIGTERM would) and starts a new one
/// on the same database file, on the same port when the system gives it back,
/// else on a fresh one with the client moved there.
///
/// The use of `@unchecked Sendable` is safe for this type because: a test
/// uses one instance from its own task only; the two `var`s change only in
/// `restart()`, which that task awaits before touching the instance again;
/// other tasks of the test only read `client` and `directory`, `let`s of
/// Sendable types.
public final class RunningServer: @unchecked Sendable {
    /// What `withRunningServer` runs unless told otherwise: quiet (errors
    /// only, no access log) and `normal` durability, which survives a crash
    /// of the process and spares every test an fsync per commit. Rate
    /// limits are off (0), even in tokens mode where they are on by
    /// default: a test sends requests as fast as it can, and the tests of
    /// the limits turn them on themselves.
    public static let defaultConfiguration = ServerConfiguration(
        host: "127.0.0.1", port: 0, durability: .normal, logLevel: .error, accessLog: false,
        rateLimitReads: 0, rateLimitWrites: 0)

    public let directory: TemporaryDirectory
    public let client: ChatHistoryClient
    public private(set) var application: HistoryApplication
    /// After `restart()`: whether the new server got the old port back.
    public private(set) var restartedOnSamePort: Bool?

    public var port: Int { application.port }
    public var databasePath: String { application.configuration.databasePath }

    /// Starts `configuration` with its port set to 0 and its database in
    /// `directory` (or in PostgreSQL).
    init(configuration: ServerConfiguration, directory: TemporaryDirectory,
         clientConfiguration: HistoryClientConfiguration) throws {
        var configuration = configuration
        configuration.port = 0
        configuration.databasePath = try serverDatabase(in: directory.url)
        self.directory = directory
        application = try Self.start(configuration)
        client = ChatHistoryClient(baseURL: URL(string: application.address)!, configuration: clientConfiguration)
    }

    private static func start(_ configuration: ServerConfiguration) throws -> HistoryApplication {
        let application = try HistoryApplication(configuration: configuration)
        try application.start()
        return application
    }

    /// A new keep-alive connection over loopback. Its socket timeout only
    /// bounds a failure: `swift test` on two cores can starve a server's
    /// answer for well over ten seconds without anything being wrong.
    public func connect(timeout: Duration = .seconds(60)) throws -> HTTPClientConnection {
        try HTTPClientConnection(host: application.configuration.host, port: port, timeout: timeout)
    }

    /// Shuts the server down (parked long-polls are answered) and waits for it.
    public func stop() async {
        let application = self.application
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            application.shutdown(gracePeriod: .seconds(2)) { continuation.resume() }
        }
    }

    public func restart() async throws {
        var configuration = application.configuration
        configuration.port = port
        await stop()
        do {
            application = try Self.start(configuration)
            restartedOnSamePort = true
        } catch {
            configuration.port = 0
            application = try Self.start(configuration)
            client.setBaseURL(URL(string: application.address)!)
            restartedOnSamePort = false
        }
    }
}

/// Runs `body` with a fresh server (and client) on `configuration`, whose
/// port and database path the fixture sets; shuts the server down and
/// removes its files afterwards, whether `body` returns or throws.
public func withRunningServer<T>(
    configuration: ServerConfiguration = RunningServer.defaultConfiguration,
    clientConfiguration: HistoryClientConfiguration = HistoryClientConfiguration(),
    _ body: (RunningServer) throws -> T
) throws -> T {
    try withTemporaryDirectory { directory in
        let server = try RunningServer(configuration: configuration, directory: directory,
                                       clientConfiguration: clientConfiguration)
        defer { server.application.shutdownAndWait(gracePeriod: .seconds(2)) }
        return try body(server)
    }
}

/// The same for an async body.
public func withRunningServer<T>(
    configuration: ServerConfiguration = RunningServer.defaultConfiguration,
    clientConfiguration: HistoryClientConfiguration = HistoryClientConfiguration(),
    _ body: (RunningServer) async throws -> T
) async throws -> T {
    try await withTemporaryDirectory { directory in
        let server = try RunningServer(configuration: configuration, directory: directory,
                                       clientConfiguration: clientConfiguration)
        do {
            let result = try await body(server)
            await server.stop()
            return result
        } catch {
            await server.stop()
            throw error
        }
    }
}

/// The `withRunningServer { client in }` shape, for tests that need one connection.
public func withRunningServer<T>(client body: (HTTPClientConnection) throws -> T) throws -> T {
    try withRunningServer { server in
        let client = try server.connect()
        defer { client.close() }
        return try body(client)
    }
}
