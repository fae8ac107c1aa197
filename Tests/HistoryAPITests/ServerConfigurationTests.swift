import HistoryAPI
import HistoryStore
import Testing

@Suite("ServerConfiguration")
struct ServerConfigurationTests {
    private func parse(_ arguments: [String], _ environment: [String: String] = [:]) throws(ConfigurationError) -> ServerConfiguration? {
        guard case .run(let configuration) = try ServerConfiguration.parse(arguments: arguments, environment: environment) else {
            return nil
        }
        return configuration
    }

    @Test func defaultsMatchTheIssue() throws {
        let configuration = try #require(try parse([]))
        #expect(configuration == ServerConfiguration())
        #expect(configuration.host == "127.0.0.1")
        #expect(configuration.port == 8080)
        #expect(configuration.databasePath == "./data/history.sqlite")
        #expect(configuration.durability == .full)
        #expect(configuration.maximumConnections == 10_000)
        #expect(configuration.accessLog)
    }

    @Test func flagsInBothFormsAndEnvironmentWithFlagsWinning() throws {
        let environment = ["HISTORY_HOST": "::1", "HISTORY_PORT": "9000", "HISTORY_DATABASE": "/tmp/x.sqlite",
                           "HISTORY_DURABILITY": "normal", "HISTORY_MAX_CONNECTIONS": "5", "HISTORY_LOG_LEVEL": "debug",
                           "HISTORY_ACCESS_LOG": "off"]
        let fromEnvironment = try #require(try parse([], environment))
        #expect(fromEnvironment == ServerConfiguration(host: "::1", port: 9000, databasePath: "/tmp/x.sqlite", durability: .normal,
                                                       maximumConnections: 5, logLevel: .debug, accessLog: false))
        let overridden = try #require(try parse(["--port", "0", "--durability=full", "--access-log", "on", "--log-level=error"], environment))
        #expect(overridden.port == 0)
        #expect(overridden.durability == .full)
        #expect(overridden.accessLog)
        #expect(overridden.logLevel == .error)
        #expect(overridden.host == "::1")
    }

    @Test func helpWins() throws {
        #expect(try ServerConfiguration.parse(arguments: ["--port", "1", "--help"], environment: [:]) == .help)
        #expect(try ServerConfiguration.parse(arguments: ["-h"], environment: [:]) == .help)
        #expect(ServerConfiguration.usage.contains("USAGE:"))
        #expect(ServerConfiguration.usage.contains("OPTIONS:"))
        for flag in ["--host", "--port", "--database", "--durability", "--max-connections", "--log-level", "--access-log"] {
            #expect(ServerConfiguration.usage.contains(flag))
        }
    }

    @Test(arguments: [
        ["--port", "65536"], ["--port", "-1"], ["--port", "http"], ["--port"], ["--durability", "sometimes"],
        ["--max-connections", "0"], ["--log-level", "loud"], ["--access-log", "maybe"], ["--bogus"], ["stray"],
        ["--host", ""], ["--database="],
    ])
    func badFlagsAreErrors(_ arguments: [String]) {
        #expect(throws: ConfigurationError.self) { try ServerConfiguration.parse(arguments: arguments, environment: [:]) }
    }

    @Test func badEnvironmentNamesTheVariable() {
        #expect(throws: ConfigurationError("HISTORY_PORT must be an integer from 0 to 65535, not 'x'")) {
            try ServerConfiguration.parse(arguments: [], environment: ["HISTORY_PORT": "x"])
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
