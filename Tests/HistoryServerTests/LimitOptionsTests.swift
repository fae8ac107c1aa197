import HistoryAccess
import HistoryTestSupport
import HistoryAPI
import HistoryStore
import HistoryWiring
import Testing
@testable import HistoryServer

/// The limit flags, each also an environment variable, a given flag
/// winning; and the limits they make in each access mode.
@Suite struct LimitOptionsTests {
    private func parse(_ arguments: [String], _ environment: [String: String] = [:]) throws(ConfigurationError) -> ServerConfiguration? {
        guard case .run(let configuration) = try ServerLaunch(arguments: arguments, environment: environment) else {
            return nil
        }
        return configuration
    }

    @Test func defaults() throws {
        let configuration = try #require(try parse([]))
        #expect(configuration.maximumResponseBytes == 1_048_576)
        #expect(configuration.maximumParkedPollsPerClient == 100)
        #expect(configuration.writeTimeout == .seconds(30))
        #expect(configuration.rateLimitReads == nil && configuration.rateLimitWrites == nil && configuration.rateLimitBurst == nil)
        let open = configuration.clientLimits(tokensMode: false)
        #expect(open.reads == nil && open.writes == nil, "open mode: off unless configured")
        let tokens = configuration.clientLimits(tokensMode: true)
        #expect(tokens.reads == RateLimit(perSecond: 50, burst: 100))
        #expect(tokens.writes == RateLimit(perSecond: 10, burst: 20))
    }

    @Test func flagsSetEachLimit() throws {
        let configuration = try #require(try parse([
            "--max-response-bytes", "65536", "--rate-limit-reads", "5", "--rate-limit-writes", "0",
            "--max-parked-polls-per-client", "7", "--write-timeout", "5",
        ]))
        #expect(configuration.writeTimeout == .seconds(5))
        #expect(configuration.maximumResponseBytes == 65536)
        #expect(configuration.maximumParkedPollsPerClient == 7)
        let limits = configuration.clientLimits(tokensMode: true)
        #expect(limits.reads == RateLimit(perSecond: 5, burst: 10), "burst defaults to twice the rate")
        #expect(limits.writes == nil, "0 turns the tokens-mode default off")
        #expect(limits.maximumParkedPollsPerClient == 7)
    }

    @Test func burstAppliesToBothRatesAndEnvironmentFillsWhatFlagsLeave() throws {
        let configuration = try #require(try parse(["--rate-limit-writes", "3"], [
            "HISTORY_RATE_LIMIT_WRITES": "99", "HISTORY_RATE_LIMIT_READS": "4", "HISTORY_RATE_LIMIT_BURST": "6",
            "HISTORY_MAX_RESPONSE_BYTES": "8192", "HISTORY_MAX_PARKED_POLLS_PER_CLIENT": "2",
            "HISTORY_WRITE_TIMEOUT": "86400",
        ]))
        #expect(configuration.writeTimeout == .seconds(86400))
        #expect(configuration.maximumResponseBytes == 8192)
        #expect(configuration.maximumParkedPollsPerClient == 2)
        let limits = configuration.clientLimits(tokensMode: false)
        #expect(limits.writes == RateLimit(perSecond: 3, burst: 6), "the flag wins over its variable")
        #expect(limits.reads == RateLimit(perSecond: 4, burst: 6))
    }

    @Test func badValuesAreRefused() {
        for arguments in [["--max-response-bytes", "100"], ["--rate-limit-reads", "-1"], ["--rate-limit-burst", "0"],
                          ["--max-parked-polls-per-client", "0"], ["--rate-limit-writes", "many"],
                          ["--write-timeout", "0"], ["--write-timeout", "2s"], ["--write-timeout", "86401"]] {
            #expect(throws: ConfigurationError.self, "\(arguments)") { try parse(arguments) }
        }
        #expect(throws: ConfigurationError.self) { try parse([], ["HISTORY_MAX_RESPONSE_BYTES": "1k"]) }
        #expect(throws: ConfigurationError.self) { try parse([], ["HISTORY_WRITE_TIMEOUT": "-1"]) }
    }

    @Test func readConnectionsAreTheStoresDefaultUnlessGiven() throws {
        #expect(try #require(try parse([])).readConnections == nil)
        #expect(try #require(try parse(["--read-connections", "16"])).readConnections == 16)
        #expect(try #require(try parse([], ["HISTORY_READ_CONNECTIONS": "2"])).readConnections == 2)
        #expect(try #require(try parse(["--read-connections", "3"], ["HISTORY_READ_CONNECTIONS": "2"])).readConnections == 3)
        for value in ["0", "257", "-1", "many"] {
            #expect(throws: ConfigurationError.self, "\(value)") { try parse(["--read-connections", value]) }
        }
    }
}
