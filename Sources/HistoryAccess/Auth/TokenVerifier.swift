@preconcurrency import Crypto
import Foundation
import HistoryStore

/// Decides from a request's `Authorization` header who is asking, by
/// verifying the bearer JWT (RFC 7519, compact JWS) against the configured
/// keys.
///
/// What a token must be to pass, in the order checked:
/// - at most 8 KiB, three strict base64url parts, a JSON header with a
///   string `alg` and no `crit`;
/// - a `kid` naming a configured key (or none, when exactly one key is
///   configured), and `alg` equal to that key's algorithm (`HS256` for a
///   secret, `ES256` for a P-256 public key): `none` and every other value
///   are refused, whatever the token claims;
/// - a valid signature (HMAC compared in constant time by `Crypto`; ECDSA
///   in the 64-byte `r || s` form JWS uses, not DER);
/// - JSON claims with a valid `sub` and a numeric `exp`, correctly typed
///   `nbf`, `iat`, `aud`, `iss`, `scope`; `aud` naming the configured
///   audience and `iss` equal to the configured issuer, when configured;
/// - `nbf` and `iat` not later than now plus the leeway, and now before
///   `exp` plus the leeway (else `.expired`).
///
/// A token that passed is cached by its bytes until its `exp` (plus leeway),
/// so repeated requests cost one hash and one dictionary lookup.
///
/// A signature check is the one costly step (an ES256 verification takes
/// about 150 µs), so the caller may refuse it: `mayCheckSignature` runs
/// just before it, and when it returns false the token is refused unchecked
/// (the server charges the client's rate there, docs/API.md "Edges").
///
/// Rejection reasons are meant for the server's log. None contains the token
/// or a claim's value, since the token is a credential.
///
/// ```swift
/// let verifier = TokenVerifier(keys: keys, audience: "chat", issuer: nil)
/// switch verifier.verify(authorization: request.headers["authorization"]) {
/// case .success(let caller): ...
/// case .failure(let rejection): // 401 with rejection.code
/// }
/// ```
public final class TokenVerifier: Sendable {
    /// Longer tokens are refused before any parsing: ours carry a handful of
    /// claims, and a cap keeps hashing and JSON work per request small.
    public static let maximumTokenBytes = 8 * 1024

    let keys: TokenKeys
    let audience: String?
    let issuer: String?
    /// The leeway in seconds.
    let leeway: Double
    let clock: @Sendable () -> Double
    let cache: VerifiedTokenCache

    /// - Parameters:
    ///   - keys: the keys tokens may be signed with.
    ///   - audience: when set, a token's `aud` must be or contain it.
    ///   - issuer: when set, a token's `iss` must equal it.
    ///   - leeway: how far clocks may disagree, applied to `exp`, `nbf` and `iat`.
    ///   - clock: seconds since the epoch; tests pass a fixed one.
    ///   - cacheCapacity: how many verified tokens are remembered; 0 disables.
    public init(keys: TokenKeys, audience: String?, issuer: String?, leeway: Duration = .seconds(60),
                clock: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 },
                cacheCapacity: Int = 10_000) {
        self.keys = keys
        self.audience = audience
        self.issuer = issuer
        let (seconds, attoseconds) = leeway.components
        self.leeway = max(0, Double(seconds) + Double(attoseconds) / 1e18)
        self.clock = clock
        cache = VerifiedTokenCache(capacity: cacheCapacity)
    }

    /// Parses and verifies an `Authorization` header value (`Bearer <jwt>`,
    /// the scheme in any case). A nil or blank header is `.missing`.
    ///
    /// An ASCII header, which every valid one is, is split as bytes
    /// (`BearerHeader`), and the token is hashed for the cache from those
    /// bytes: the `Substring` walks that split it before cost about 7,000
    /// instructions a request in tokens mode (callgrind, docs/performance.md).
    /// A header with any other byte takes the `Character` path, so a space
    /// joined to a combining mark is still not trimmed.
    public func verify(authorization: Substring?,
                       mayCheckSignature: () -> Bool = { true }) -> Result<Caller, TokenRejection> {
        guard var authorization else { return .failure(.missing) }
        let split = authorization.withUTF8 { bytes -> Result<Caller, TokenRejection>? in
            switch BearerHeader.split(bytes) {
            case .notASCII: nil
            case .missing: .failure(.missing)
            case .refused(let reason): .failure(.invalid(reason))
            case .token(let range):
                verify(tokenBytes: UnsafeBufferPointer(rebasing: bytes[range]), mayCheckSignature: mayCheckSignature)
            }
        }
        return split ?? verifyByCharacter(authorization: authorization, mayCheckSignature: mayCheckSignature)
    }

    /// `verify(authorization:)` over `Character`s, for a header that is not ASCII.
    func verifyByCharacter(authorization: Substring,
                           mayCheckSignature: () -> Bool) -> Result<Caller, TokenRejection> {
        let value = authorization.trimmingSpacesAndTabs()
        guard !value.isEmpty else { return .failure(.missing) }
        guard let space = value.utf8.firstIndex(where: { $0 == 0x20 || $0 == 0x09 }) else {
            return .failure(.invalid(Self.isBearer(value) ? BearerHeader.noToken : BearerHeader.notBearer))
        }
        guard Self.isBearer(value[..<space]) else {
            return .failure(.invalid(BearerHeader.notBearer))
        }
        let token = value[space...].trimmingSpacesAndTabs()
        guard token.utf8.count <= Self.maximumTokenBytes else {
            return .failure(.invalid(BearerHeader.tooLong))
        }
        guard !token.utf8.contains(where: { $0 == 0x20 || $0 == 0x09 }) else {
            return .failure(.invalid(BearerHeader.spacesInside))
        }
        return verify(token: token, mayCheckSignature: mayCheckSignature)
    }

    /// Verifies a bare compact JWT (no `Bearer ` prefix).
    public func verify(token: Substring, mayCheckSignature: () -> Bool = { true }) -> Result<Caller, TokenRejection> {
        var token = token
        return token.withUTF8 { verify(tokenBytes: $0, mayCheckSignature: mayCheckSignature) }
    }

    private func verify(tokenBytes: UnsafeBufferPointer<UInt8>,
                        mayCheckSignature: () -> Bool) -> Result<Caller, TokenRejection> {
        guard tokenBytes.count <= Self.maximumTokenBytes else {
            return .failure(.invalid(BearerHeader.tooLong))
        }
        let now = clock()
        let cacheKey = VerifiedTokenCache.key(for: tokenBytes)
        switch cache.lookup(cacheKey, now: now) {
        case .verified(let caller): return .success(caller)
        case .expired: return .failure(.expired)
        case .miss: break
        }
        do throws(TokenRejection) {
            let claims = try verifiedClaims(Array(tokenBytes), now: now, mayCheckSignature: mayCheckSignature)
            let caller: Caller = claims.hasAdminScope ? .admin(subject: claims.subject.rawValue) : .user(claims.subject)
            cache.insert(cacheKey, caller: caller, deadline: claims.expiresAt + leeway)
            return .success(caller)
        } catch {
            return .failure(error)
        }
    }

    /// Every check but the cache's, in the order the type's doc lists.
    private func verifiedClaims(_ token: [UInt8], now: Double,
                                mayCheckSignature: () -> Bool) throws(TokenRejection) -> TokenClaims {
        let compact = try CompactToken(token)
        guard let key = keys.key(for: compact.header.keyID) else {
            if compact.header.keyID != nil { throw .invalid("unknown kid") }
            throw .invalid(keys.isEmpty ? "no key is configured" : "no kid, and \(keys.count) keys are configured")
        }
        guard compact.header.algorithm == key.algorithm else {
            throw .invalid("alg is not \(key.algorithm), the algorithm of the key its kid names")
        }
        guard mayCheckSignature() else { throw .invalid("not checked: this client's rate is spent") }
        guard Self.isValidSignature(compact.signature, of: compact.signingInput, with: key) else {
            throw .invalid("bad signature")
        }
        let claims = try TokenClaims(json: compact.decodedPayload())
        if let audience {
            guard let audiences = claims.audiences else { throw .invalid("no aud claim") }
            guard audiences.contains(audience) else { throw .invalid("aud does not name this server") }
        }
        if let issuer {
            guard let tokenIssuer = claims.issuer else { throw .invalid("no iss claim") }
            guard tokenIssuer == issuer else { throw .invalid("iss is not the configured issuer") }
        }
        if let notBefore = claims.notBefore, notBefore > now + leeway {
            throw .invalid("not valid yet (nbf is in the future)")
        }
        if let issuedAt = claims.issuedAt, issuedAt > now + leeway {
            throw .invalid("issued in the future (iat)")
        }
        guard now < claims.expiresAt + leeway else { throw .expired }
        return claims
    }

    /// The auth-scheme is case-insensitive (RFC 9110 §11.1).
    private static func isBearer(_ scheme: Substring) -> Bool {
        scheme.utf8.count == 6 && scheme.lowercased() == "bearer"
    }

    private static func isValidSignature(_ signature: [UInt8], of signingInput: ArraySlice<UInt8>,
                                         with key: TokenKeys.Key) -> Bool {
        switch key {
        case .hs256(let secret):
            guard signature.count == SHA256.byteCount else { return false }
            return HMAC<SHA256>.isValidAuthenticationCode(signature, authenticating: signingInput, using: secret)
        case .es256(let publicKey):
            guard signature.count == 64,
                  let ecdsaSignature = try? P256.Signing.ECDSASignature(rawRepresentation: signature)
            else { return false }
            return publicKey.isValidSignature(ecdsaSignature, for: signingInput)
        }
    }
}

extension Substring {
    /// Without leading and trailing spaces and tabs (HTTP's optional whitespace).
    ///
    /// Over UTF-8 bytes: the `Character` walk cost 2,500 instructions per
    /// request in tokens mode (callgrind, docs/performance.md). A space or
    /// tab next to a combining or prepended mark is one `Character`, which
    /// that walk does not trim: a value whose trimmed edge is not ASCII
    /// takes it.
    func trimmingSpacesAndTabs() -> Substring {
        let bytes = utf8
        var start = bytes.startIndex
        var end = bytes.endIndex
        while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start = bytes.index(after: start) }
        if start > bytes.startIndex, start < end, bytes[start] >= 0x80 { return trimmingSpacesAndTabsByCharacter() }
        while end > start {
            let last = bytes.index(before: end)
            guard bytes[last] == 0x20 || bytes[last] == 0x09 else { break }
            end = last
        }
        // A prepended mark before a trailing space joins it into one `Character` too.
        if end < bytes.endIndex, end > start, bytes[bytes.index(before: end)] >= 0x80 {
            return trimmingSpacesAndTabsByCharacter()
        }
        return self[start..<end]
    }

    private func trimmingSpacesAndTabsByCharacter() -> Substring {
        var result = self
        while let first = result.first, first == " " || first == "\t" { result.removeFirst() }
        while let last = result.last, last == " " || last == "\t" { result.removeLast() }
        return result
    }
}
