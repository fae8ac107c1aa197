import Crypto
import Foundation

/// Mints compact JWTs the way an app's backend would, with a key the server
/// under test verifies: an HS256 shared secret or an ES256 private key.
///
/// Header `{"alg":…,"typ":"JWT","kid":…}` and claims written compactly in a
/// fixed order, so the same inputs give the same token.
struct TokenSigner: Sendable {
    /// Key material as bytes: swift-crypto's key types are not `Sendable`,
    /// and every virtual user's thread mints with the same signer.
    enum Key: Sendable, Hashable {
        /// The shared secret's bytes.
        case hs256([UInt8])
        /// `P256.Signing.PrivateKey.rawRepresentation`.
        case es256([UInt8])
    }

    let kid: String
    let key: Key

    var algorithm: String {
        switch key {
        case .hs256: "HS256"
        case .es256: "ES256"
        }
    }

    init(kid: String, key: Key) throws(TokenSetupError) {
        guard Self.isValidKeyID(kid) else {
            throw TokenSetupError("key id \"\(kid)\" must be 1 to 64 printable ASCII characters without quotes, backslashes or spaces")
        }
        self.kid = kid
        self.key = key
    }

    /// The server accepts printable key ids; excluding `"` and `\` keeps the
    /// header free of JSON escapes.
    static func isValidKeyID(_ kid: String) -> Bool {
        (1...64).contains(kid.utf8.count)
            && kid.utf8.allSatisfy { (0x21...0x7E).contains($0) && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }
    }

    /// A token for `subject` valid from `now` for `lifetime` seconds; with
    /// `admin`, the service scope `"scope":"admin"`.
    /// - Precondition: `subject` is a valid user id (no JSON escapes needed).
    func token(subject: String, admin: Bool = false, lifetime: Int, now: Int) -> String {
        let header = #"{"alg":"\#(algorithm)","typ":"JWT","kid":"\#(kid)"}"#
        var claims = #"{"sub":"\#(subject)","iat":\#(now),"exp":\#(now + lifetime)"#
        if admin { claims += #","scope":"admin""# }
        claims += "}"
        let signingInput = Base64URL.encode(header.utf8) + "." + Base64URL.encode(claims.utf8)
        return signingInput + "." + Base64URL.encode(signature(of: Array(signingInput.utf8)))
    }

    /// HS256: the HMAC-SHA256; ES256: the raw `r || s` (64 bytes, RFC 7518 §3.4), not DER.
    func signature(of input: [UInt8]) -> [UInt8] {
        switch key {
        case .hs256(let secret):
            return Array(HMAC<SHA256>.authenticationCode(for: input, using: SymmetricKey(data: secret)))
        case .es256(let raw):
            // Both were checked when the key was loaded: a key that parsed
            // once parses again, and signing cannot fail short of a broken RNG.
            let privateKey = try! P256.Signing.PrivateKey(rawRepresentation: raw)
            return Array((try! privateKey.signature(for: input)).rawRepresentation)
        }
    }
}

/// One line for stderr: a key file the tool cannot use.
struct TokenSetupError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
