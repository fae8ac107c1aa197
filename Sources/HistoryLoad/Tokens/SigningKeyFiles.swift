import Crypto
import Foundation

/// Reads the key files of the signing options: the server's HS256 secret
/// file (`KID SECRET` lines) and ES256 PEM private keys.
enum SigningKeyFiles {
    /// The server refuses shorter secrets; minting with one would only make
    /// every request of the run fail.
    static let minimumSecretBytes = 32

    /// The secret file's keys in file order: text, one `KID SECRET` per line
    /// separated by spaces or tabs, the secret being the field's bytes;
    /// blank lines and lines starting with `#` are skipped.
    static func hs256Secrets(path: String) throws(TokenSetupError) -> [(kid: String, secret: [UInt8])] {
        let bytes = try read(path, what: "HS256 secret file")
        var secrets: [(kid: String, secret: [UInt8])] = []
        for (index, line) in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).enumerated() {
            let fields = line.split(whereSeparator: { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") || $0 == UInt8(ascii: "\r") })
            guard let first = fields.first, first.first != UInt8(ascii: "#") else { continue }
            guard fields.count == 2 else {
                throw TokenSetupError("\(path) line \(index + 1): expected \"KID SECRET\" (two fields separated by spaces)")
            }
            guard fields[1].count >= minimumSecretBytes else {
                throw TokenSetupError("\(path) line \(index + 1): the secret is \(fields[1].count) bytes; at least \(minimumSecretBytes) are required")
            }
            secrets.append((String(decoding: first, as: UTF8.self), Array(fields[1])))
        }
        guard !secrets.isEmpty else { throw TokenSetupError("\(path): no key (expected lines \"KID SECRET\")") }
        return secrets
    }

    /// The signer of the secret file's key `kid`, or of its first key.
    static func hs256Signer(path: String, kid: String?) throws(TokenSetupError) -> TokenSigner {
        let secrets = try hs256Secrets(path: path)
        guard let chosen = kid.map({ kid in secrets.first { $0.kid == kid } }) ?? secrets.first else {
            throw TokenSetupError("\(path) has no key id \"\(kid ?? "")\" (it has \(secrets.map(\.kid).joined(separator: ", ")))")
        }
        return try TokenSigner(kid: chosen.kid, key: .hs256(chosen.secret))
    }

    /// The signer of a PEM P-256 private key (`EC PRIVATE KEY` or PKCS #8).
    static func es256Signer(_ argument: PrivateKeyArgument) throws(TokenSetupError) -> TokenSigner {
        let bytes = try read(argument.path, what: "ES256 private key file")
        let key: P256.Signing.PrivateKey
        do {
            key = try P256.Signing.PrivateKey(pemRepresentation: String(decoding: bytes, as: UTF8.self))
        } catch {
            throw TokenSetupError("\(argument.path): not a PEM P-256 private key")
        }
        return try TokenSigner(kid: argument.kid, key: .es256(Array(key.rawRepresentation)))
    }

    private static func read(_ path: String, what: String) throws(TokenSetupError) -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw TokenSetupError("\(what) \(path) cannot be read")
        }
        guard data.count <= 1 << 20 else { throw TokenSetupError("\(what) \(path) is larger than 1 MiB") }
        return Array(data)
    }
}
