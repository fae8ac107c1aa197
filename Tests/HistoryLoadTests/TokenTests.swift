import HistoryTestSupport
import ArgumentParser
import Crypto
import Foundation
import Testing
@testable import HistoryLoad

/// Minting: the `token` command's output is a compact JWT whose header and
/// claims say what was asked and whose signature checks with the key; the
/// key-file and option rules.
@Suite("Tokens")
struct TokenTests {
    static let secret = "load-tests-secret-0123456789-abcdefghijkl"

    static func writeSecrets(_ text: String, in folder: URL) throws -> String {
        let path = folder.appending(path: "secrets.txt").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// The three parts of a compact JWT, the first two decoded as JSON objects.
    static func parts(_ token: String) throws -> (header: [String: Any], claims: [String: Any], signature: [UInt8], input: String) {
        let pieces = token.split(separator: ".", omittingEmptySubsequences: false)
        try #require(pieces.count == 3)
        let header = try #require(Base64URL.decode(pieces[0]))
        let claims = try #require(Base64URL.decode(pieces[1]))
        let signature = try #require(Base64URL.decode(pieces[2]))
        #expect(!token.contains("="), "base64url without padding")
        return (try #require(try JSONSerialization.jsonObject(with: Data(header)) as? [String: Any]),
                try #require(try JSONSerialization.jsonObject(with: Data(claims)) as? [String: Any]),
                signature, "\(pieces[0]).\(pieces[1])")
    }

    /// `history-load token ...` as a child process; its stdout, trimmed.
    static func runTokenCommand(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appending(path: "history-load")
        let process = Process()
        process.executableURL = binary
        process.arguments = ["token"] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.runSerialized()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    @Test func theTokenCommandPrintsAnHS256TokenThatChecks() throws {
        try withTemporaryDirectory { directory in
            let folder = directory.url
            let path = try Self.writeSecrets("# dev keys\nold \(Self.secret)-old\n\nk2\t\(Self.secret)\n", in: folder)
            let before = Int(Date().timeIntervalSince1970)
            let (status, token) = try Self.runTokenCommand(["--sub", "ana", "--ttl", "600", "--jwt-secret-file", path, "--kid", "k2"])
            #expect(status == 0)
            let parts = try Self.parts(token)
            #expect(parts.header["alg"] as? String == "HS256")
            #expect(parts.header["typ"] as? String == "JWT")
            #expect(parts.header["kid"] as? String == "k2")
            #expect(parts.claims["sub"] as? String == "ana")
            #expect(parts.claims["scope"] == nil)
            let iat = try #require(parts.claims["iat"] as? Int)
            let exp = try #require(parts.claims["exp"] as? Int)
            #expect(iat >= before && iat <= Int(Date().timeIntervalSince1970))
            #expect(exp == iat + 600)
            let key = SymmetricKey(data: Data(Self.secret.utf8))
            #expect(HMAC<SHA256>.isValidAuthenticationCode(parts.signature, authenticating: Data(parts.input.utf8), using: key))
            // The other key of the file does not check it.
            let other = SymmetricKey(data: Data("\(Self.secret)-old".utf8))
            #expect(!HMAC<SHA256>.isValidAuthenticationCode(parts.signature, authenticating: Data(parts.input.utf8), using: other))
        }
    }

    @Test func adminTokensCarryTheScopeAndTheFirstKeyIsTheDefault() throws {
        try withTemporaryDirectory { directory in
            let folder = directory.url
            let path = try Self.writeSecrets("first \(Self.secret)\nsecond \(Self.secret)-2\n", in: folder)
            let (status, token) = try Self.runTokenCommand(["--sub", "backend", "--admin", "--jwt-secret-file", path])
            #expect(status == 0)
            let parts = try Self.parts(token)
            #expect(parts.header["kid"] as? String == "first")
            #expect(parts.claims["scope"] as? String == "admin")
            #expect(try #require(parts.claims["exp"] as? Int) == (try #require(parts.claims["iat"] as? Int)) + 3600)
        }
    }

    @Test func theTokenCommandRefusesBadInput() throws {
        try withTemporaryDirectory { directory in
            let folder = directory.url
            let path = try Self.writeSecrets("k1 \(Self.secret)\n", in: folder)
            #expect(try Self.runTokenCommand(["--sub", "not valid", "--jwt-secret-file", path]).status != 0)
            #expect(try Self.runTokenCommand(["--sub", "ana"]).status != 0)
            #expect(try Self.runTokenCommand(["--sub", "ana", "--jwt-secret-file", path, "--kid", "nope"]).status != 0)
            #expect(try Self.runTokenCommand(["--sub", "ana", "--ttl", "0", "--jwt-secret-file", path]).status != 0)
            #expect(try Self.runTokenCommand(["--sub", "ana", "--jwt-secret-file", folder.appending(path: "missing").path]).status != 0)
        }
    }

    @Test func es256TokensVerifyWithThePublicKey() throws {
        try withTemporaryDirectory { directory in
            let folder = directory.url
            let key = P256.Signing.PrivateKey()
            let path = folder.appending(path: "es.pem").path
            try key.pemRepresentation.write(toFile: path, atomically: true, encoding: .utf8)
            let (status, token) = try Self.runTokenCommand(["--sub", "bob", "--jwt-es256-private-key", "ec1=\(path)"])
            #expect(status == 0)
            let parts = try Self.parts(token)
            #expect(parts.header["alg"] as? String == "ES256")
            #expect(parts.header["kid"] as? String == "ec1")
            #expect(parts.signature.count == 64, "JWS wants r || s, not DER")
            let signature = try P256.Signing.ECDSASignature(rawRepresentation: parts.signature)
            #expect(key.publicKey.isValidSignature(signature, for: Data(parts.input.utf8)))
            #expect(!P256.Signing.PrivateKey().publicKey.isValidSignature(signature, for: Data(parts.input.utf8)))
        }
    }

    @Test func secretFilesFollowTheServersFormat() throws {
        try withTemporaryDirectory { directory in
            let folder = directory.url
            let good = try Self.writeSecrets("# comment\n\n a \(Self.secret) \r\nb\t\(Self.secret)x\n", in: folder)
            let secrets = try SigningKeyFiles.hs256Secrets(path: good)
            #expect(secrets.map(\.kid) == ["a", "b"])
            #expect(secrets[1].secret == Array("\(Self.secret)x".utf8))
            for bad in ["k1 short\n", "k1 \(Self.secret) extra\n", "# only a comment\n", ""] {
                let path = try Self.writeSecrets(bad, in: folder)
                #expect(throws: TokenSetupError.self) { try SigningKeyFiles.hs256Secrets(path: path) }
            }
        }
    }

    @Test func tokenModeOptionsOnRunSeedAndBench() throws {
        let run = try RunCommand.parse(["--url", "http://127.0.0.1:8080", "--jwt-secret-file", "s.txt", "--kid", "k2", "--members", "8"])
        #expect(run.tokens.keys.secretFile == "s.txt")
        #expect(run.tokens.keys.kid == "k2")
        #expect(run.tokens.members == 8)
        let seed = try SeedCommand.parse(["--direct", "x.sqlite", "--jwt-es256-private-key", "ec=key.pem"])
        #expect(seed.tokens.keys.es256PrivateKey == PrivateKeyArgument(kid: "ec", path: "key.pem"))
        let bench = try BenchCommand.parse(["--url", "http://127.0.0.1:8080", "--jwt-secret-file", "s", "--jwt-es256-private-key", "e=p"])
        #expect(bench.tokens.keys.secretFile == "s" && bench.tokens.keys.es256PrivateKey?.kid == "e")
        #expect(try RunCommand.parse(["--url", "http://127.0.0.1:8080"]).tokens.keys.isEmpty)
        #expect(throws: (any Error).self) { try RunCommand.parse(["--url", "http://127.0.0.1:8080", "--kid", "k"]) }
        #expect(throws: (any Error).self) { try RunCommand.parse(["--url", "http://127.0.0.1:8080", "--members", "0"]) }
        #expect(throws: (any Error).self) { try SeedCommand.parse(["--direct", "x", "--jwt-es256-private-key", "nokid"]) }
    }

    @Test func virtualUsersHaveDistinctSubjectsUpToTheMembers() throws {
        let subjects = (0..<10).map { LoadCredentials.subject(ofUser: $0, members: 4) }
        #expect(subjects[0] == "load-user-0000")
        #expect(Set(subjects.prefix(4)).count == 4)
        #expect(subjects[4] == subjects[0])
    }
}
