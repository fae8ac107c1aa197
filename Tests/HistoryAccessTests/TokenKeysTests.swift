@preconcurrency import Crypto
import Foundation
import HistoryStore
import Testing
@testable import HistoryAccess

@Suite("TokenKeys")
struct TokenKeysTests {
    let secret = "a-secret-that-is-long-enough-for-hs256-0123"

    /// A fresh folder per test, removed by the caller's `defer`.
    func makeFolder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("token-keys-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    func write(_ text: String, to name: String, in folder: URL) throws -> String {
        let url = folder.appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        return url.path
    }

    func loadError(hs256: String?, es256: [(kid: String, path: String)] = []) -> TokenKeyError? {
        do {
            _ = try TokenKeys.load(hs256SecretFile: hs256, es256PublicKeys: es256)
            return nil
        } catch {
            return error
        }
    }

    @Test func loadsASecretFileWithCommentsAndBlankLines() throws {
        let folder = try makeFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = try write("# keys for the chat server\n\nk1 \(secret)\r\n   \n\tk2\t\(secret)-two  \n#k3 \(secret)\n", to: "secrets", in: folder)
        let keys = try TokenKeys.load(hs256SecretFile: path, es256PublicKeys: [])
        #expect(keys.keyIDs == ["k1", "k2"])
        #expect(!keys.isEmpty)
        let lines = try TokenKeys.readHS256Secrets(path: path)
        #expect(lines.map(\.kid) == ["k1", "k2"])
        #expect(lines.map(\.lineNumber) == [3, 5])
        #expect(lines[1].secret == Array("\(secret)-two".utf8))

        // The loaded secrets verify tokens made with the file's bytes.
        let verifier = TokenVerifier(keys: keys, audience: nil, issuer: nil, clock: TokenTestClock().reader)
        let token = LiteralTokenMinter.hs256(#"{"sub":"ana","exp":\#(TokenTestClock.start + 60)}"#, kid: "k2", secret: Array("\(secret)-two".utf8))
        #expect(verifier.verify(token: Substring(token)) == .success(.user(UserID("ana")!)))
    }

    @Test func noFilesIsOpenMode() throws {
        let keys = try TokenKeys.load(hs256SecretFile: nil, es256PublicKeys: [])
        #expect(keys.isEmpty)
        #expect(TokenKeys().isEmpty)
    }

    @Test func aShortSecretIsRefusedWithoutPrintingIt() throws {
        let folder = try makeFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let short = "only-31-bytes-long-secret-12345"
        #expect(short.utf8.count == 31)
        let path = try write("k1 \(secret)\nk2 \(short)\n", to: "secrets", in: folder)
        let error = try #require(loadError(hs256: path))
        #expect(error.message == "\(path) line 2: the secret of key id \"k2\" is 31 bytes; at least 32 are required")
        #expect(!error.message.contains(short))

        let exactly32 = String(repeating: "s", count: 32)
        let okay = try write("k1 \(exactly32)\n", to: "okay", in: folder)
        #expect(try TokenKeys.load(hs256SecretFile: okay, es256PublicKeys: []).count == 1)
    }

    @Test(arguments: ["k1", "k1 SECRET extra", "k1 SECRET k2 SECRET"])
    func malformedLinesAreRefusedWithoutPrintingThem(line: String) throws {
        let folder = try makeFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = try write("# header\n" + line.replacingOccurrences(of: "SECRET", with: secret) + "\n", to: "secrets", in: folder)
        let error = try #require(loadError(hs256: path))
        #expect(error.message == "\(path) line 2: expected \"KID SECRET\" (two fields separated by spaces)")
        #expect(!error.message.contains(secret))
    }

    @Test func aFileWithoutKeysIsRefused() throws {
        let folder = try makeFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        for text in ["", "\n\n", "# only a comment\n"] {
            let path = try write(text, to: "empty", in: folder)
            #expect(loadError(hs256: path)?.message == "\(path): no key (expected lines \"KID SECRET\")")
        }
    }

    @Test func missingAndUnreadableFilesAreRefused() throws {
        let folder = try makeFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let missing = folder.appendingPathComponent("nope").path
        #expect(loadError(hs256: missing)?.message == "HS256 secret file \(missing) does not exist")
        #expect(loadError(hs256: folder.path)?.message == "HS256 secret file \(folder.path) is a directory")
        #expect(loadError(hs256: nil, es256: [("e1", missing)])?.message
            == "ES256 public key file for key id \"e1\" \(missing) does not exist")

        if getuid() != 0 {  // root reads files whatever their mode
            let locked = try write("k1 \(secret)\n", to: "locked", in: folder)
            try FileManager.default.setAttributes([.posixPermissions: 0o000], ofItemAtPath: locked)
            #expect(loadError(hs256: locked)?.message.contains("cannot be read") == true)
        }
    }

    @Test func aHugeFileIsRefused() throws {
        let folder = try makeFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = try write(String(repeating: "# padding line\n", count: 80_000), to: "huge", in: folder)
        #expect(loadError(hs256: path)?.message == "HS256 secret file \(path) is larger than 1048576 bytes")
    }

    @Test func duplicateKeyIDsAreRefused() throws {
        let folder = try makeFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let secrets = try write("k1 \(secret)\nk1 \(secret)-other\n", to: "secrets", in: folder)
        #expect(loadError(hs256: secrets)?.message == "\(secrets) line 2: key id \"k1\" is configured twice")

        let pem = try write(P256.Signing.PrivateKey().publicKey.pemRepresentation, to: "e1.pem", in: folder)
        let single = try write("k1 \(secret)\n", to: "single", in: folder)
        #expect(loadError(hs256: single, es256: [("k1", pem)])?.message == "key id \"k1\" is configured twice")
        #expect(loadError(hs256: nil, es256: [("e1", pem), ("e1", pem)])?.message == "key id \"e1\" is configured twice")
    }

    @Test func loadsES256PublicKeys() throws {
        let folder = try makeFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let first = P256.Signing.PrivateKey()
        let second = P256.Signing.PrivateKey()
        let firstPath = try write(first.publicKey.pemRepresentation + "\n", to: "e1.pem", in: folder)
        let secondPath = try write(second.publicKey.pemRepresentation, to: "e2.pem", in: folder)
        let keys = try TokenKeys.load(hs256SecretFile: nil, es256PublicKeys: [("e1", firstPath), ("e2", secondPath)])
        #expect(keys.keyIDs == ["e1", "e2"])

        let verifier = TokenVerifier(keys: keys, audience: nil, issuer: nil, clock: TokenTestClock().reader)
        let claims = #"{"sub":"ana","exp":\#(TokenTestClock.start + 60)}"#
        #expect(verifier.verify(token: Substring(LiteralTokenMinter.es256(claims, kid: "e1", key: first))).isAccepted)
        #expect(verifier.verify(token: Substring(LiteralTokenMinter.es256(claims, kid: "e2", key: second))).isAccepted)
        #expect(!verifier.verify(token: Substring(LiteralTokenMinter.es256(claims, kid: "e1", key: second))).isAccepted)
    }

    @Test func malformedPEMsAreRefused() throws {
        let folder = try makeFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let privateKey = P256.Signing.PrivateKey()
        let good = privateKey.publicKey.pemRepresentation
        let candidates = [
            "not a pem at all",
            "",
            good.replacingOccurrences(of: "PUBLIC KEY", with: "CERTIFICATE"),
            String(good.dropLast(30)),
            privateKey.pemRepresentation,  // a private key is not what the flag takes
            P384.Signing.PrivateKey().publicKey.pemRepresentation,
        ]
        for (index, text) in candidates.enumerated() {
            let path = try write(text, to: "bad\(index).pem", in: folder)
            #expect(loadError(hs256: nil, es256: [("e1", path)])?.message
                == "\(path): not a PEM P-256 public key (-----BEGIN PUBLIC KEY-----)", "candidate \(index)")
        }
        let binary = folder.appendingPathComponent("binary.pem")
        try Data([0xFF, 0xFE, 0x00, 0x80]).write(to: binary)
        #expect(loadError(hs256: nil, es256: [("e1", binary.path)])?.message == "\(binary.path): not a PEM P-256 public key (the file is not text)")
    }

    @Test func keyIDsMustBePrintableWithoutSpaces() throws {
        for kid in ["", "a b", "tab\there", "é", String(repeating: "k", count: 257)] {
            #expect(throws: TokenKeyError.self) {
                try TokenKeys(hs256Secrets: [(kid, Array(secret.utf8))])
            }
        }
        #expect(try TokenKeys(hs256Secrets: [(String(repeating: "k", count: 256), Array(secret.utf8))]).count == 1)
    }
}

extension TokenKeysTests {
    @Test func badKeyIDsInFilesAndFlagsAreRefusedBeforeAnythingElse() throws {
        let folder = try makeFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = try write("k\u{1B}[31m short\n", to: "secrets", in: folder)
        #expect(loadError(hs256: path)?.message
            == "\(path) line 1: a key id must be 1 to 256 printable ASCII characters without spaces")
        let missing = folder.appendingPathComponent("missing.pem").path
        #expect(loadError(hs256: nil, es256: [("", missing)])?.message
            == "--jwt-es256-public-key \(missing): a key id must be 1 to 256 printable ASCII characters without spaces")
    }
}
