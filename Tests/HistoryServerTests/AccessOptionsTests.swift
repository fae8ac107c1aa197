import HistoryTestSupport
import HistoryAPI
import HistoryStore
import HistoryWiring
import Testing
@testable import HistoryServer

/// The identity and browser flags, each also an environment variable
/// (comma-separated for the repeatable ones), a given flag winning.
@Suite struct AccessOptionsTests {
    private func parse(_ arguments: [String], _ environment: [String: String] = [:]) throws(ConfigurationError) -> ServerConfiguration? {
        guard case .run(let configuration) = try ServerLaunch(arguments: arguments, environment: environment) else {
            return nil
        }
        return configuration
    }

    @Test func noneGivenIsOpenModeWithoutExtras() throws {
        let configuration = try #require(try parse([]))
        #expect(configuration.jwtHS256SecretFile == nil)
        #expect(configuration.jwtES256PublicKeys.isEmpty)
        #expect(configuration.jwtAudience == nil && configuration.jwtIssuer == nil)
        #expect(!configuration.insecureNoAuth)
        #expect(configuration.allowedHosts.isEmpty && configuration.corsOrigins.isEmpty)
    }

    @Test func flagsRepeatAndFill() throws {
        let configuration = try #require(try parse([
            "--jwt-hs256-secret-file", "/keys/hs", "--jwt-es256-public-key", "a=/keys/a.pem",
            "--jwt-es256-public-key=b=/keys/b.pem", "--jwt-audience", "chat", "--jwt-issuer", "backend",
            "--insecure-no-auth", "--allowed-host", "chat.internal", "--allowed-host", "box.local",
            "--cors-origin", "https://app.example", "--cors-origin", "http://localhost:3000",
        ]))
        #expect(configuration.jwtHS256SecretFile == "/keys/hs")
        #expect(configuration.jwtES256PublicKeys == [.init(kid: "a", path: "/keys/a.pem"), .init(kid: "b", path: "/keys/b.pem")])
        #expect(configuration.jwtAudience == "chat")
        #expect(configuration.jwtIssuer == "backend")
        #expect(configuration.insecureNoAuth)
        #expect(configuration.allowedHosts == ["chat.internal", "box.local"])
        #expect(configuration.corsOrigins == ["https://app.example", "http://localhost:3000"])
    }

    @Test func variablesFillWhatNoFlagGives() throws {
        let environment = ["HISTORY_JWT_HS256_SECRET_FILE": "/env/hs", "HISTORY_JWT_ES256_PUBLIC_KEY": "a=/env/a.pem,b=/env/b.pem",
                           "HISTORY_JWT_AUDIENCE": "chat", "HISTORY_JWT_ISSUER": "backend", "HISTORY_INSECURE_NO_AUTH": "on",
                           "HISTORY_ALLOWED_HOST": "one,two", "HISTORY_CORS_ORIGIN": "https://a.example,https://b.example"]
        let fromEnvironment = try #require(try parse([], environment))
        #expect(fromEnvironment.jwtHS256SecretFile == "/env/hs")
        #expect(fromEnvironment.jwtES256PublicKeys.map(\.kid) == ["a", "b"])
        #expect(fromEnvironment.insecureNoAuth)
        #expect(fromEnvironment.allowedHosts == ["one", "two"])
        #expect(fromEnvironment.corsOrigins == ["https://a.example", "https://b.example"])
        let overridden = try #require(try parse(["--allowed-host", "three", "--jwt-es256-public-key", "c=/c.pem"], environment))
        #expect(overridden.allowedHosts == ["three"])
        #expect(overridden.jwtES256PublicKeys.map(\.kid) == ["c"])
        #expect(overridden.corsOrigins == ["https://a.example", "https://b.example"])
    }

    @Test(arguments: [
        ["--jwt-es256-public-key", "no-equals"], ["--jwt-es256-public-key", "=path"], ["--jwt-es256-public-key", "kid="],
        ["--cors-origin", "app.example"], ["--cors-origin", "https://app.example/"], ["--allowed-host", ""],
        ["--jwt-hs256-secret-file", ""], ["--insecure-no-auth", "yes"],
    ])
    func badValuesAreRefused(_ arguments: [String]) {
        #expect(throws: ConfigurationError.self) { try parse(arguments) }
    }

    @Test func aBadVariableIsNamed() {
        #expect(throws: ConfigurationError.self) { try parse([], ["HISTORY_CORS_ORIGIN": "https://ok.example,not-an-origin"]) }
        #expect(throws: ConfigurationError.self) { try parse([], ["HISTORY_INSECURE_NO_AUTH": "maybe"]) }
    }
}
