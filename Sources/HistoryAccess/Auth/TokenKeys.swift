@preconcurrency import Crypto

/// The keys tokens may be signed with, by key id (`kid`): HS256 shared
/// secrets and ES256 public keys, several at once so a key can be rotated
/// (tokens signed with the old and the new key both verify while both are
/// configured).
///
/// Each key has one algorithm. A token's `alg` header must name exactly the
/// algorithm of the key its `kid` selects: trusting `alg` instead is the
/// classic confusion attack, where a token "HS256-signed" with an ES256
/// public key (which is public) passes as genuine.
///
/// `Crypto` 3 does not mark its key types `Sendable`, though they are
/// immutable values that only read their key material while verifying;
/// hence the `@preconcurrency` import.
public struct TokenKeys: Sendable {
    /// One configured key and the only algorithm it verifies.
    enum Key: Sendable {
        case hs256(SymmetricKey)
        case es256(P256.Signing.PublicKey)

        /// The JWS `alg` value a token must carry to be checked with this key.
        var algorithm: String {
            switch self {
            case .hs256: "HS256"
            case .es256: "ES256"
            }
        }
    }

    /// The shortest HS256 secret accepted: RFC 7518 §3.2 requires a key at
    /// least as long as the hash output, 256 bits.
    public static let minimumSecretBytes = 32

    private(set) var keysByID: [String: Key] = [:]

    /// No key: open mode.
    public init() {}

    /// Keys given directly (tests, tools that mint their own tokens).
    /// - Throws: `TokenKeyError` for a secret shorter than 32 bytes, a PEM
    ///   that is not a P-256 public key, a bad or repeated key id.
    public init(hs256Secrets: [(kid: String, secret: [UInt8])] = [],
                es256PublicKeyPEMs: [(kid: String, pem: String)] = []) throws(TokenKeyError) {
        for (kid, secret) in hs256Secrets {
            try addHS256(kid: kid, secret: secret, origin: "HS256 key \"\(kid)\"")
        }
        for (kid, pem) in es256PublicKeyPEMs {
            try addES256(kid: kid, pem: pem, origin: "ES256 key \"\(kid)\"")
        }
    }

    /// True in open mode.
    public var isEmpty: Bool { keysByID.isEmpty }

    /// How many keys are configured.
    public var count: Int { keysByID.count }

    /// The configured key ids, sorted (for a start-up log line).
    public var keyIDs: [String] { keysByID.keys.sorted() }

    /// The key a token with this `kid` header selects: the named key, or the
    /// only key when the token names none and exactly one is configured.
    func key(for kid: String?) -> Key? {
        if let kid { return keysByID[kid] }
        return keysByID.count == 1 ? keysByID.first?.value : nil
    }

    mutating func addHS256(kid: String, secret: [UInt8], origin: String) throws(TokenKeyError) {
        try Self.checkKeyID(kid, origin: origin)
        guard secret.count >= Self.minimumSecretBytes else {
            throw TokenKeyError("\(origin): the secret is \(secret.count) bytes; at least \(Self.minimumSecretBytes) are required")
        }
        try insert(.hs256(SymmetricKey(data: secret)), kid: kid)
    }

    mutating func addES256(kid: String, pem: String, origin: String) throws(TokenKeyError) {
        try Self.checkKeyID(kid, origin: origin)
        let key: P256.Signing.PublicKey
        do {
            key = try P256.Signing.PublicKey(pemRepresentation: pem)
        } catch {
            throw TokenKeyError("\(origin): not a PEM P-256 public key (-----BEGIN PUBLIC KEY-----)")
        }
        try insert(.es256(key), kid: kid)
    }

    private mutating func insert(_ key: Key, kid: String) throws(TokenKeyError) {
        guard keysByID[kid] == nil else {
            throw TokenKeyError("key id \"\(kid)\" is configured twice")
        }
        keysByID[kid] = key
    }

    /// A key id is printable ASCII without spaces, so it can be written in a
    /// secret file line, a `KID=PATH` flag and an error message as it is.
    static func checkKeyID(_ kid: String, origin: String) throws(TokenKeyError) {
        guard (1...256).contains(kid.utf8.count), kid.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw TokenKeyError("\(origin): a key id must be 1 to 256 printable ASCII characters without spaces")
        }
    }
}
