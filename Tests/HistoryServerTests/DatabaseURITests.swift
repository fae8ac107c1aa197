import HistoryAPI
import HistoryPostgres
import HistoryTestSupport
import HistoryWiring
import Testing
@testable import HistoryServer

@Suite("--database as a PostgreSQL URI")
struct DatabaseURITests {
    @Test func aPostgresURIIsTakenAsIsAndChoosesPostgreSQL() throws {
        for uri in ["postgres://app@db.internal:5432/history", "postgresql:///history?host=/run/postgresql"] {
            guard case .run(let configuration) = try ServerLaunch(arguments: ["--database", uri], environment: [:]) else {
                Issue.record("no configuration")
                return
            }
            #expect(configuration.databasePath == uri)
            #expect(PostgresStoreConfiguration.isPostgresURI(configuration.databasePath))
        }
        for path in ["./data/history.sqlite", "/srv/postgres/history.sqlite", "postgres.sqlite", "postgresql:/x"] {
            #expect(!PostgresStoreConfiguration.isPostgresURI(path))
        }
    }

    /// Start-up lines and errors show the database, never its password.
    @Test(arguments: [
        ("postgres://app:s3cret@db:5432/history", "postgres://app:***@db:5432/history"),
        ("postgresql://app:p%40ss@db/history?sslmode=require", "postgresql://app:***@db/history?sslmode=require"),
        ("postgresql://app@db/history?password=s3cret&sslmode=require", "postgresql://app@db/history?password=***&sslmode=require"),
        ("postgresql:///history?host=/run/postgresql", "postgresql:///history?host=/run/postgresql"),
        ("./data/history.sqlite", "./data/history.sqlite"),
    ])
    func passwordsAreRedacted(_ database: String, _ shown: String) {
        var configuration = ServerConfiguration()
        configuration.databasePath = database
        #expect(configuration.displayedDatabase == shown)
    }

    /// A database that cannot be reached is one readable line, status 1,
    /// and no password.
    @Test func anUnreachableDatabaseExitsOneWithOneLine() throws {
        let result = try ServerProcess.run(["--port", "0", "--database", "postgresql://app:s3cret@/history?host=/nonexistent",
                                            "--access-log", "off"])
        #expect(result.status == 1)
        #expect(result.stderr.hasPrefix("history-server: error: cannot open the database postgresql://app:***@/history?host=/nonexistent: the database is unavailable: "), "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        #expect(!result.stderr.contains("s3cret"))
    }

    @Test func helpSaysBoth() throws {
        let result = try ServerProcess.run(["--help"])
        #expect(result.stdout.contains("postgres://"))
        #expect(result.stdout.contains("postgresql://"))
    }
}
