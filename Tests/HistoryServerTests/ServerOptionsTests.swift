import HistoryAPI
import HistorySQLite
import HistoryStore
import HistoryWiring
import Testing
@testable import HistoryServer

@Suite("history-server options")
struct ServerOptionsTests {
    private static let variables = ["HISTORY_HOST", "HISTORY_PORT", "HISTORY_DATABASE", "HISTORY_DURABILITY",
                                    "HISTORY_MAX_CONNECTIONS", "HISTORY_LOG_LEVEL", "HISTORY_ACCESS_LOG"]

    private func parse(_ arguments: [String], _ environment: [String: String] = [:]) throws(ConfigurationError) -> ServerConfiguration? {
        guard case .run(let configuration) = try ServerLaunch(arguments: arguments, environment: environment) else {
            return nil
        }
        return configuration
    }

    @Test func nothingGivenIsTheDocumentedDefaults() throws {
        let configuration = try #require(try parse([]))
        #expect(configuration == ServerConfiguration())
        #expect(configuration.host == "127.0.0.1")
        #expect(configuration.port == 8080)
        #expect(configuration.databasePath == "./data/history.sqlite")
        #expect(configuration.durability == .full)
        #expect(configuration.maximumConnections == 10_000)
        #expect(configuration.logLevel == .info)
        #expect(configuration.accessLog)
    }

    @Test func flagsInBothFormsAndEnvironmentWithFlagsWinning() throws {
        let environment = ["HISTORY_HOST": "::1", "HISTORY_PORT": "9000", "HISTORY_DATABASE": "/tmp/x.sqlite",
                           "HISTORY_DURABILITY": "normal", "HISTORY_MAX_CONNECTIONS": "5", "HISTORY_LOG_LEVEL": "debug",
                           "HISTORY_ACCESS_LOG": "off"]
        let fromEnvironment = try #require(try parse([], environment))
        #expect(fromEnvironment == ServerConfiguration(host: "::1", port: 9000, databasePath: "/tmp/x.sqlite", durability: .normal,
                                                       maximumConnections: 5, logLevel: .debug, accessLog: false))
        let overridden = try #require(try parse(["--port", "0", "--durability=full", "--access-log", "on", "--log-level=error",
                                                 "--max-connections", "7", "--database", "/tmp/y.sqlite"], environment))
        #expect(overridden == ServerConfiguration(host: "::1", port: 0, databasePath: "/tmp/y.sqlite", durability: .full,
                                                  maximumConnections: 7, logLevel: .error, accessLog: true))
    }

    @Test func helpWinsAndNamesEveryFlagWithItsVariableAndDefault() throws {
        guard case .help(let text) = try ServerLaunch(arguments: ["--port", "1", "--help"], environment: [:]) else {
            Issue.record("--help did not ask for help")
            return
        }
        #expect(try ServerLaunch(arguments: ["-h"], environment: [:]) == .help(text))
        #expect(text.contains("USAGE: history-server"))
        #expect(text.contains("OPTIONS:"))
        let flattened = text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        for flag in ["--host", "--port", "--database", "--durability", "--max-connections", "--log-level", "--access-log"] {
            #expect(text.contains(flag), "\(flag)")
        }
        for (variable, defaultValue) in zip(Self.variables, ["127.0.0.1", "8080", "./data/history.sqlite", "full",
                                                             "10000", "info", "on"]) {
            #expect(flattened.contains("(env: \(variable), default: \(defaultValue))"), "\(variable)")
        }
    }

    @Test(arguments: [
        ["--port", "65536"], ["--port", "-1"], ["--port", "http"], ["--port", "+80"], ["--port"],
        ["--durability", "sometimes"], ["--max-connections", "0"], ["--log-level", "loud"], ["--access-log", "maybe"],
        ["--bogus"], ["stray"], ["--host", ""], ["--database="],
    ])
    func badFlagsAreErrorsOfOneLine(_ arguments: [String]) {
        do {
            _ = try ServerLaunch(arguments: arguments, environment: [:])
            Issue.record("\(arguments) was accepted")
        } catch {
            #expect(!error.message.isEmpty && !error.message.contains("\n"), "\(error.message)")
        }
    }

    @Test func aBadFlagSaysWhatItTakes() {
        #expect(throws: ConfigurationError("The value 'http' is invalid for '--port <port>': must be an integer from 0 to 65535")) {
            try ServerLaunch(arguments: ["--port", "http"], environment: [:])
        }
    }

    @Test func aBadVariableIsNamedWithWhatItTakes() {
        #expect(throws: ConfigurationError("The value 'x' is invalid for HISTORY_PORT: must be an integer from 0 to 65535")) {
            try ServerLaunch(arguments: [], environment: ["HISTORY_PORT": "x"])
        }
        for variable in Self.variables where variable != "HISTORY_HOST" && variable != "HISTORY_DATABASE" {
            #expect(throws: ConfigurationError.self, "\(variable)") {
                try ServerLaunch(arguments: [], environment: [variable: "bogus"])
            }
        }
        for variable in ["HISTORY_HOST", "HISTORY_DATABASE"] {
            #expect(throws: ConfigurationError.self, "\(variable)") {
                try ServerLaunch(arguments: [], environment: [variable: ""])
            }
        }
    }

    /// The newest pages' cache: 16 MiB by default, in MiB from a flag or
    /// the environment, 0 to keep none, nothing past 64 GiB.
    @Test func theNewestPageCacheTakesMiBFromZero() throws {
        #expect(try #require(try parse([])).newestPageCacheBytes == 16 << 20)
        #expect(try #require(try parse(["--newest-page-cache-mib", "0"])).newestPageCacheBytes == 0)
        #expect(try #require(try parse(["--newest-page-cache-mib=256"])).newestPageCacheBytes == 256 << 20)
        #expect(try #require(try parse([], ["HISTORY_NEWEST_PAGE_CACHE_MIB": "1"])).newestPageCacheBytes == 1 << 20)
        #expect(try #require(try parse(["--newest-page-cache-mib", "2"], ["HISTORY_NEWEST_PAGE_CACHE_MIB": "1"]))
            .newestPageCacheBytes == 2 << 20)
        for bad in ["65537", "x", "1.5", "+1", ""] {
            #expect(throws: ConfigurationError.self, "\(bad)") {
                try ServerLaunch(arguments: ["--newest-page-cache-mib", bad], environment: [:])
            }
            #expect(throws: ConfigurationError.self, "\(bad)") {
                try ServerLaunch(arguments: [], environment: ["HISTORY_NEWEST_PAGE_CACHE_MIB": bad])
            }
        }
    }

    /// A flag wins, so a bad variable it overrides does not stop the start.
    @Test func aBadVariableAFlagOverridesIsNotChecked() throws {
        let environment = ["HISTORY_PORT": "abc", "HISTORY_DURABILITY": "xyz"]
        let configuration = try #require(try parse(["--port", "8081", "--durability=normal"], environment))
        #expect(configuration.port == 8081)
        #expect(configuration.durability == .normal)
        #expect(throws: ConfigurationError.self) { try parse(["--port", "8081"], environment) }  // durability not overridden
    }
}
