import HistoryTestSupport
import Foundation
import HTTPCore
import Testing

/// How `history-server` chooses between open and tokens mode, and how it
/// refuses to start when the choice would be unsafe or a key is unusable.
@Suite struct AccessModeProcessTests {
    @Test(arguments: [["--host", "0.0.0.0"], ["--host", "192.0.2.1"], ["--host", "::"]])
    func aPublicBindWithoutKeysRefusesToStart(_ host: [String]) throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let result = try ServerProcess.run(host + ["--port", "0", "--database", folder.databasePath])
        #expect(result.status == 2)
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(result.stderr)")
        #expect(result.stderr.contains("loopback") && result.stderr.contains("--insecure-no-auth"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder.databasePath))
    }

    @Test func insecureNoAuthStartsWithAWarning() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let server = try ServerProcess(arguments: ["--host", "0.0.0.0", "--port", "0", "--database", folder.databasePath,
                                                   "--insecure-no-auth", "--access-log", "off"],
                                       startupAddress: "http://0.0.0.0:")
        defer { server.stop() }
        #expect(server.stderrText.contains("insecure-no-auth"), "\(server.stderrText)")
        let client = try server.connect()
        defer { client.close() }
        #expect(try client.request(HTTPRequest(method: .get, target: "/v1/conversations/none")).status == 404)
    }

    @Test(arguments: [
        ["--jwt-hs256-secret-file", "/nonexistent/secret"],
        ["--jwt-es256-public-key", "k1=/nonexistent/key.pem"],
        ["--jwt-es256-public-key", "no-equals-sign"],
    ])
    func anUnusableKeyExitsTwoWithOneLine(_ arguments: [String]) throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let result = try ServerProcess.run(arguments + ["--port", "0", "--database", folder.databasePath])
        #expect(result.status == 2)
        #expect(result.stderr.split(separator: "\n").count <= 2, "\(result.stderr)")
        #expect(result.stderr.hasPrefix("history-server: error:"), "\(result.stderr)")
    }

    @Test func aShortSecretIsRefused() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let secret = folder.url.appending(path: "secret").path
        try "k1 short\n".write(toFile: secret, atomically: true, encoding: .utf8)
        let result = try ServerProcess.run(["--jwt-hs256-secret-file", secret, "--port", "0", "--database", folder.databasePath])
        #expect(result.status == 2, "\(result.stderr)")
    }

    @Test func keysFromTheEnvironmentTurnTokensOn() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let secret = folder.url.appending(path: "secret").path
        try "k1 0123456789abcdef0123456789abcdef-long-enough\n".write(toFile: secret, atomically: true, encoding: .utf8)
        let server = try ServerProcess(arguments: ["--port", "0", "--database", folder.databasePath, "--access-log", "off"],
                                       environment: ["HISTORY_JWT_HS256_SECRET_FILE": secret])
        defer { server.stop() }
        let client = try server.connect()
        defer { client.close() }
        let response = try client.request(HTTPRequest(method: .get, target: "/v1/conversations/none"))
        #expect(response.status == 401)
        #expect(response.headers["WWW-Authenticate"] == #"Bearer realm="history""#)
        #expect(try client.request(HTTPRequest(method: .get, target: "/healthz")).status == 200)
    }
}
