import Foundation
import HistoryAPI
import HistoryClient
import HistoryStore
import Testing

/// The whole history server in-process on 127.0.0.1, over a real SQLite file
/// in a temporary folder, and a HistoryClient pointed at it.
///
/// `restart()` stops it (gracefully, as SIGTERM would) and starts a new one
/// on the same database file, on the same port when the system gives it back,
/// else on a fresh one with the client moved there.
///
/// The use of `@unchecked Sendable` is safe for this type because: a test
/// uses one instance from its own task only; the two `var`s change only in
/// `restart()`, which that task awaits before touching the instance again;
/// other tasks of the test only read `client`, a `let` of a Sendable type.
final class RunningServer: @unchecked Sendable {
    let directory: URL
    let client: HistoryClient
    private(set) var app: HistoryApplication
    private(set) var restartedOnSamePort: Bool?

    var databasePath: String { directory.appendingPathComponent("history.sqlite").path }

    init(clientConfiguration: HistoryClientConfiguration = HistoryClientConfiguration()) throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("history-client-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        do {
            app = try Self.startApplication(databasePath: directory.appendingPathComponent("history.sqlite").path,
                                            port: 0)
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
        client = HistoryClient(baseURL: URL(string: app.address)!, configuration: clientConfiguration)
    }

    private static func startApplication(databasePath: String, port: Int) throws -> HistoryApplication {
        let configuration = ServerConfiguration(port: port, databasePath: databasePath, durability: .normal,
                                                logLevel: .error, accessLog: false)
        let app = try HistoryApplication(configuration: configuration)
        try app.start()
        return app
    }

    func stop() async {
        let app = self.app
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            app.shutdown(gracePeriod: .seconds(2)) { continuation.resume() }
        }
    }

    func restart() async throws {
        let port = app.port
        await stop()
        do {
            app = try Self.startApplication(databasePath: databasePath, port: port)
            restartedOnSamePort = true
        } catch {
            app = try Self.startApplication(databasePath: databasePath, port: 0)
            client.setBaseURL(URL(string: app.address)!)
            restartedOnSamePort = false
        }
    }

    func removeFiles() {
        try? FileManager.default.removeItem(at: directory)
    }
}

/// Runs `body` with a fresh server and client; stops the server and deletes
/// its files afterwards, whether `body` threw or not.
func withRunningServer(
    clientConfiguration: HistoryClientConfiguration = HistoryClientConfiguration(),
    _ body: (RunningServer) async throws -> Void
) async throws {
    let server = try RunningServer(clientConfiguration: clientConfiguration)
    do {
        try await body(server)
    } catch {
        await server.stop()
        server.removeFiles()
        throw error
    }
    await server.stop()
    server.removeFiles()
}

/// Expects `body` to throw the contract's error `code` with `status`.
func expectServerError<T>(
    _ code: HistoryErrorCode, status: Int, sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () async throws -> T
) async {
    do {
        _ = try await body()
        Issue.record("expected \(code), got success", sourceLocation: sourceLocation)
    } catch let error as HistoryClientError {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
        #expect(error.status == status, "\(error)", sourceLocation: sourceLocation)
        if case .server(let serverError) = error {
            #expect(!serverError.message.isEmpty, sourceLocation: sourceLocation)
        }
    } catch {
        Issue.record("expected HistoryClientError, got \(error)", sourceLocation: sourceLocation)
    }
}

/// Collects what a consumer task receives, for tests that wait on it.
actor Collector<Element: Sendable> {
    private(set) var items: [Element] = []

    func append(_ item: Element) {
        items.append(item)
    }

    /// Polls until `count` items arrived or `limit` passed; returns what arrived.
    func waitFor(count: Int, limit: Duration = .seconds(30)) async -> [Element] {
        let clock = ContinuousClock()
        let deadline = clock.now + limit
        while items.count < count, clock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        return items
    }
}
