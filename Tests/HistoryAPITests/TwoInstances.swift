import HistoryAPI
import HistoryTestSupport
import HistoryWiring
import Testing

/// Runs `body` with two in-process instances of `configuration` on one new
/// database of the suite's PostgreSQL cluster (`.postgresCluster`): what
/// one instance commits, the other hears only through PostgreSQL. Both are
/// shut down when `body` ends.
func withTwoInstances<T>(_ configuration: ServerConfiguration = RunningServer.defaultConfiguration,
                         _ body: (_ a: HistoryApplication, _ b: HistoryApplication) throws -> T) throws -> T {
    var configuration = configuration
    configuration.databasePath = try #require(PostgresTestCluster.current).createDatabase()
    let a = try HistoryApplication(configuration: configuration)
    try a.start()
    defer { a.shutdownAndWait(gracePeriod: .seconds(2)) }
    let b = try HistoryApplication(configuration: configuration)
    try b.start()
    defer { b.shutdownAndWait(gracePeriod: .seconds(2)) }
    return try body(a, b)
}
