import HistoryTestSupport
@preconcurrency import Crypto
import Foundation
import Synchronization
import HistoryStore
import Testing
@testable import HistoryAccess

@Suite("TokenVerifier")
struct TokenVerifierTests {
    let secretOne = Array("first-secret-of-thirty-two-bytes-or-more".utf8)
    let secretTwo = Array("second-secret-of-thirty-two-bytes-or-more".utf8)
    let signingKey = P256.Signing.PrivateKey()

    func keys() throws -> TokenKeys {
        try TokenKeys(hs256Secrets: [("k1", secretOne), ("k2", secretTwo)],
                      es256PublicKeyPEMs: [("e1", signingKey.publicKey.pemRepresentation)])
    }

    func verifier(audience: String? = nil, issuer: String? = nil, clock: TokenTestClock = TokenTestClock()) throws -> TokenVerifier {
        TokenVerifier(keys: try keys(), audience: audience, issuer: issuer, clock: clock.reader)
    }

    func hs256(_ claims: String, kid: String? = "k1", secret: [UInt8]? = nil) -> String {
        LiteralTokenMinter.hs256(claims, kid: kid, secret: secret ?? secretOne)
    }

    func expectInvalid(_ result: Result<Caller, TokenRejection>, sourceLocation: SourceLocation = #_sourceLocation) {
        guard case .failure(.invalid) = result else {
            Issue.record("expected invalid_token, got \(result)", sourceLocation: sourceLocation)
            return
        }
    }

    // MARK: Accepted

    @Test func acceptsAnHS256UserToken() throws {
        let result = try verifier().verify(authorization: "Bearer " + hs256(#"{"sub":"ana","exp":\#(TokenTestClock.start + 300)}"#))
        #expect(result == .success(.user(UserID("ana")!)))
    }

    @Test func acceptsAnES256Token() throws {
        let token = LiteralTokenMinter.es256(#"{"sub":"bo.b@x-y_z","exp":\#(TokenTestClock.start + 300)}"#, kid: "e1", key: signingKey)
        #expect(try verifier().verify(authorization: "Bearer " + token) == .success(.user(UserID("bo.b@x-y_z")!)))
    }

    @Test(arguments: ["admin", "read admin write", "admin write"])
    func aScopeListingAdminMakesAnAdmin(scope: String) throws {
        let token = hs256(#"{"sub":"backend","scope":"\#(scope)","exp":\#(TokenTestClock.start + 300)}"#)
        #expect(try verifier().verify(authorization: "Bearer " + token) == .success(.admin(subject: "backend")))
    }

    @Test(arguments: ["administrator", "read write", "", "Admin"])
    func otherScopesAreUsers(scope: String) throws {
        let token = hs256(#"{"sub":"ana","scope":"\#(scope)","exp":\#(TokenTestClock.start + 300)}"#)
        #expect(try verifier().verify(authorization: "Bearer " + token) == .success(.user(UserID("ana")!)))
    }

    @Test(arguments: ["bearer ", "BEARER ", "Bearer   ", "  Bearer "])
    func theSchemeIsCaseInsensitiveAndSpacesAreOptionalWhitespace(prefix: String) throws {
        let token = hs256(#"{"sub":"ana","exp":\#(TokenTestClock.start + 300)}"#)
        #expect(try verifier().verify(authorization: Substring(prefix + token + " ")) == .success(.user(UserID("ana")!)))
    }

    @Test func keysRotateByKid() throws {
        let verifier = try verifier()
        let claims = #"{"sub":"ana","exp":\#(TokenTestClock.start + 300)}"#
        #expect(verifier.verify(authorization: "Bearer " + hs256(claims, kid: "k1", secret: secretOne)) == .success(.user(UserID("ana")!)))
        #expect(verifier.verify(authorization: "Bearer " + hs256(claims, kid: "k2", secret: secretTwo)) == .success(.user(UserID("ana")!)))
        // Each kid selects its own secret: the other one does not verify.
        expectInvalid(verifier.verify(authorization: "Bearer " + hs256(claims, kid: "k2", secret: secretOne)))
        expectInvalid(verifier.verify(authorization: "Bearer " + hs256(claims, kid: "k1", secret: secretTwo)))
    }

    @Test func aTokenWithoutKidUsesTheOnlyKey() throws {
        let verifier = TokenVerifier(keys: try TokenKeys(hs256Secrets: [("only", secretOne)]), audience: nil, issuer: nil,
                                     clock: TokenTestClock().reader)
        let token = hs256(#"{"sub":"ana","exp":\#(TokenTestClock.start + 300)}"#, kid: nil)
        #expect(verifier.verify(authorization: "Bearer " + token) == .success(.user(UserID("ana")!)))
    }

    @Test func aTokenWithoutKidIsRefusedWhenSeveralKeysExist() throws {
        expectInvalid(try verifier().verify(authorization: "Bearer " + hs256(#"{"sub":"ana","exp":\#(TokenTestClock.start + 300)}"#, kid: nil)))
    }

    // MARK: Missing or malformed credentials

    @Test func noHeaderIsMissing() throws {
        #expect(try verifier().verify(authorization: nil) == .failure(.missing))
        #expect(try verifier().verify(authorization: "") == .failure(.missing))
        #expect(try verifier().verify(authorization: "  \t ") == .failure(.missing))
    }

    @Test(arguments: ["Bearer", "Bearer ", "Basic YW5hOnNlY3JldA==", "Token abc.def.ghi", "Bearerabc.def.ghi"])
    func otherCredentialsAreInvalid(header: String) throws {
        expectInvalid(try verifier().verify(authorization: Substring(header)))
    }

    @Test func aTokenWithSpacesInsideIsInvalid() throws {
        let token = hs256(#"{"sub":"ana","exp":\#(TokenTestClock.start + 300)}"#)
        let split = token.index(token.startIndex, offsetBy: 10)
        expectInvalid(try verifier().verify(authorization: Substring("Bearer " + token[..<split] + " " + token[split...])))
    }

    @Test func malformedStructureIsInvalid() throws {
        let token = hs256(#"{"sub":"ana","exp":\#(TokenTestClock.start + 300)}"#)
        let parts = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        let verifier = try verifier()
        for bad in [
            parts[0] + "." + parts[1],                         // two parts
            token + ".",                                       // four parts
            token + "." + parts[2],
            "." + parts[1] + "." + parts[2],                   // empty header
            parts[0] + ".." + parts[2],                        // empty payload
            parts[0] + "." + parts[1] + ".",                   // empty signature
            parts[0] + "=." + parts[1] + "." + parts[2],       // padding
            parts[0] + "." + parts[1] + "." + parts[2] + "=",
            parts[0] + "." + parts[1] + "+." + parts[2],       // standard base64 character
            parts[0] + "." + parts[1] + "." + parts[2].replacingOccurrences(of: "_", with: "/"),
            parts[0] + "." + parts[1] + "." + parts[2] + "A",  // length 4n+1
        ] where bad != token {
            expectInvalid(verifier.verify(token: Substring(bad)))
        }
    }

    @Test func nonCanonicalBase64IsInvalid() throws {
        // "e30" is `{}`; "e31" decodes to the same bytes with a stray low bit set.
        #expect(Base64URL.decode("e30".utf8) == Array("{}".utf8))
        #expect(Base64URL.decode("e31".utf8) == nil)
        let token = hs256(#"{"sub":"ana","exp":\#(TokenTestClock.start + 300)}"#)
        var signature = String(token.split(separator: ".")[2])
        // A 32-byte MAC is 43 characters; the last carries 2 unused bits.
        let last = signature.removeLast()
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        let sibling = alphabet[alphabet.firstIndex(of: last)! ^ 1]
        let parts = token.split(separator: ".")
        expectInvalid(try verifier().verify(token: Substring(parts[0] + "." + parts[1] + "." + signature + String(sibling))))
    }

    // MARK: Algorithm and key

    @Test func algNoneIsRefused() throws {
        let header = LiteralTokenMinter.encode(#"{"alg":"none","typ":"JWT","kid":"k1"}"#)
        let claims = LiteralTokenMinter.encode(#"{"sub":"ana","scope":"admin","exp":\#(TokenTestClock.start + 300)}"#)
        let verifier = try verifier()
        expectInvalid(verifier.verify(token: Substring(header + "." + claims + ".")))
        expectInvalid(verifier.verify(token: Substring(header + "." + claims + ".AAAA")))
        let noKid = LiteralTokenMinter.encode(#"{"alg":"none"}"#)
        expectInvalid(verifier.verify(token: Substring(noKid + "." + claims + ".")))
    }

    @Test(arguments: ["HS384", "HS512", "RS256", "ES256", "PS256", "none", "hs256", "EdDSA", ""])
    func anAlgOtherThanTheKeysIsRefused(alg: String) throws {
        let token = LiteralTokenMinter.sign(header: #"{"alg":"\#(alg)","kid":"k1"}"#,
                                     claims: #"{"sub":"ana","exp":\#(TokenTestClock.start + 300)}"#) { input in
            Array(HMAC<SHA256>.authenticationCode(for: input, using: SymmetricKey(data: secretOne)))
        }
        expectInvalid(try verifier().verify(token: Substring(token)))
    }

    @Test func hs256SignedWithThePublicKeyPEMIsRefused() throws {
        // The alg-confusion attack: the ES256 key is public, so a forger
        // HMACs with its PEM text and hopes `alg` picks the algorithm.
        let pem = Array(signingKey.publicKey.pemRepresentation.utf8)
        let token = LiteralTokenMinter.hs256(#"{"sub":"ana","scope":"admin","exp":\#(TokenTestClock.start + 300)}"#, kid: "e1", secret: pem)
        expectInvalid(try verifier().verify(token: Substring(token)))
    }

    @Test func es256AgainstAnHMACKeyIsRefused() throws {
        let token = LiteralTokenMinter.es256(#"{"sub":"ana","exp":\#(TokenTestClock.start + 300)}"#, kid: "k1", key: signingKey)
        expectInvalid(try verifier().verify(token: Substring(token)))
    }

    @Test func unknownKidIsRefused() throws {
        expectInvalid(try verifier().verify(token: Substring(hs256(#"{"sub":"ana","exp":\#(TokenTestClock.start + 300)}"#, kid: "k3"))))
        expectInvalid(try verifier().verify(token: Substring(hs256(#"{"sub":"ana","exp":\#(TokenTestClock.start + 300)}"#, kid: ""))))
    }

    @Test func wrongKeysAndTamperingAreRefused() throws {
        let verifier = try verifier()
        let claims = #"{"sub":"ana","exp":\#(TokenTestClock.start + 300)}"#
        expectInvalid(verifier.verify(token: Substring(hs256(claims, secret: Array("another-secret-also-long-enough-for-hs256".utf8)))))
        expectInvalid(verifier.verify(token: Substring(LiteralTokenMinter.es256(claims, kid: "e1", key: P256.Signing.PrivateKey()))))

        // The same signature over a payload changed to name an admin.
        for token in [hs256(claims), LiteralTokenMinter.es256(claims, kid: "e1", key: signingKey)] {
            let parts = token.split(separator: ".")
            let forged = LiteralTokenMinter.encode(#"{"sub":"ana","scope":"admin","exp":\#(TokenTestClock.start + 300)}"#)
            expectInvalid(verifier.verify(token: Substring(parts[0] + "." + forged + "." + parts[2])))
        }
    }

    @Test func anES256SignatureInDERIsRefused() throws {
        let token = LiteralTokenMinter.sign(header: #"{"alg":"ES256","kid":"e1"}"#,
                                     claims: #"{"sub":"ana","exp":\#(TokenTestClock.start + 300)}"#) { input in
            Array(try! signingKey.signature(for: input).derRepresentation)
        }
        expectInvalid(try verifier().verify(token: Substring(token)))
    }

    @Test func signaturesOfTheWrongSizeOrOutOfRangeAreRefused() throws {
        let verifier = try verifier()
        let claims = #"{"sub":"ana","exp":\#(TokenTestClock.start + 300)}"#
        let hs = hs256(claims).split(separator: ".")
        let es = LiteralTokenMinter.es256(claims, kid: "e1", key: signingKey).split(separator: ".")
        let validMAC = try #require(Base64URL.decode(hs[2].utf8))
        let validECDSA = try #require(Base64URL.decode(es[2].utf8))
        let macs = [Array(validMAC.dropLast()), validMAC + [0], [UInt8](repeating: 0, count: 32), []]
        // r or s zero, or not below the group order: ECDSA rejects, nothing traps.
        let ecdsas = [[UInt8](repeating: 0, count: 64), [UInt8](repeating: 0xFF, count: 64),
                      Array(validECDSA.prefix(32)) + [UInt8](repeating: 0, count: 32),
                      Array(validECDSA.dropLast()), validECDSA + validECDSA]
        for mac in macs {
            expectInvalid(verifier.verify(token: Substring(hs[0] + "." + hs[1] + "." + Base64URL.encode(mac))))
        }
        for signature in ecdsas {
            expectInvalid(verifier.verify(token: Substring(es[0] + "." + es[1] + "." + Base64URL.encode(signature))))
        }
        #expect(verifier.verify(token: Substring(es[0] + "." + es[1] + "." + Base64URL.encode(validECDSA))).isAccepted)
    }

    @Test func extremeNumericDatesNeitherTrapNorPass() throws {
        let verifier = try verifier()
        #expect(verifier.verify(token: Substring(hs256(#"{"sub":"ana","exp":-9223372036854775809}"#))) == .failure(.expired))
        #expect(verifier.verify(token: Substring(hs256(#"{"sub":"ana","exp":0}"#))) == .failure(.expired))
        #expect(verifier.verify(token: Substring(hs256(#"{"sub":"ana","exp":100000000000000000000}"#))).isAccepted)
        expectInvalid(verifier.verify(token: Substring(hs256(#"{"sub":"ana","exp":1e400}"#))))
        expectInvalid(verifier.verify(token: Substring(hs256(#"{"sub":"ana","exp":-1e400}"#))))
        expectInvalid(verifier.verify(token: Substring(hs256(#"{"sub":"ana","exp":\#(TokenTestClock.start + 300),"nbf":1e999}"#))))
    }

    @Test func headerProblemsAreInvalid() throws {
        let claims = #"{"sub":"ana","exp":\#(TokenTestClock.start + 300)}"#
        let verifier = try verifier()
        for header in [
            #"["HS256"]"#, #""HS256""#, #"{}"#, #"{"alg":null,"kid":"k1"}"#, #"{"alg":256,"kid":"k1"}"#,
            #"{"alg":"HS256","kid":1}"#, #"{"alg":"HS256","kid":"k1","typ":7}"#,
            #"{"alg":"HS256","kid":"k1","crit":["exp"]}"#,
            #"{"alg":"HS256","alg":"HS256","kid":"k1"}"#, #"{"alg":"HS256","kid":"k1""#, "",
        ] {
            let token = LiteralTokenMinter.sign(header: header, claims: claims) { input in
                Array(HMAC<SHA256>.authenticationCode(for: input, using: SymmetricKey(data: secretOne)))
            }
            expectInvalid(verifier.verify(token: Substring(token)))
        }
    }

    // MARK: Claims

    @Test(arguments: [
        #"{"exp":EXP}"#,                                   // no sub
        #"{"sub":"","exp":EXP}"#,
        #"{"sub":"a b","exp":EXP}"#,
        #"{"sub":"ana/../x","exp":EXP}"#,
        #"{"sub":"ånа","exp":EXP}"#,
        #"{"sub":"\#(String(repeating: "a", count: 65))","exp":EXP}"#,
        #"{"sub":7,"exp":EXP}"#,
        #"{"sub":null,"exp":EXP}"#,
        #"{"sub":["ana"],"exp":EXP}"#,
        #"{"sub":"ana"}"#,                                 // no exp
        #"{"sub":"ana","exp":"EXP"}"#,
        #"{"sub":"ana","exp":null}"#,
        #"{"sub":"ana","exp":true}"#,
        #"{"sub":"ana","exp":1e999}"#,
        #"{"sub":"ana","exp":EXP,"nbf":"0"}"#,
        #"{"sub":"ana","exp":EXP,"iat":[]}"#,
        #"{"sub":"ana","exp":EXP,"aud":5}"#,
        #"{"sub":"ana","exp":EXP,"aud":["chat",5]}"#,
        #"{"sub":"ana","exp":EXP,"aud":{}}"#,
        #"{"sub":"ana","exp":EXP,"iss":false}"#,
        #"{"sub":"ana","exp":EXP,"scope":["admin"]}"#,
        #"{"sub":"ana","sub":"bob","exp":EXP}"#,           // duplicate claim
        #"["ana"]"#,
        #"{"sub":"ana","exp":EXP"#,
        #"{"sub":"ana","exp":EXP} x"#,
    ])
    func claimsOfTheWrongShapeAreInvalid(template: String) throws {
        let claims = template.replacingOccurrences(of: "EXP", with: String(TokenTestClock.start + 300))
        expectInvalid(try verifier().verify(token: Substring(hs256(claims))))
    }

    @Test func aSubOf64CharactersIsAccepted() throws {
        let sub = String(repeating: "Z", count: 64)
        let token = hs256(#"{"sub":"\#(sub)","exp":\#(TokenTestClock.start + 300)}"#)
        #expect(try verifier().verify(token: Substring(token)) == .success(.user(UserID(sub)!)))
    }

    @Test func audienceMustMatchWhenConfigured() throws {
        let verifier = try verifier(audience: "chat")
        let exp = TokenTestClock.start + 300
        #expect(verifier.verify(token: Substring(hs256(#"{"sub":"ana","exp":\#(exp),"aud":"chat"}"#))).isAccepted)
        #expect(verifier.verify(token: Substring(hs256(#"{"sub":"ana","exp":\#(exp),"aud":["mail","chat"]}"#))).isAccepted)
        expectInvalid(verifier.verify(token: Substring(hs256(#"{"sub":"ana","exp":\#(exp),"aud":"mail"}"#))))
        expectInvalid(verifier.verify(token: Substring(hs256(#"{"sub":"ana","exp":\#(exp),"aud":["mail"]}"#))))
        expectInvalid(verifier.verify(token: Substring(hs256(#"{"sub":"ana","exp":\#(exp),"aud":[]}"#))))
        expectInvalid(verifier.verify(token: Substring(hs256(#"{"sub":"ana","exp":\#(exp),"aud":"Chat"}"#))))
        expectInvalid(verifier.verify(token: Substring(hs256(#"{"sub":"ana","exp":\#(exp)}"#))))
    }

    @Test func audienceIsOnlyTypeCheckedWhenNotConfigured() throws {
        let exp = TokenTestClock.start + 300
        #expect(try verifier().verify(token: Substring(hs256(#"{"sub":"ana","exp":\#(exp),"aud":"anything"}"#))).isAccepted)
    }

    @Test func issuerMustMatchWhenConfigured() throws {
        let verifier = try verifier(issuer: "https://app.example")
        let exp = TokenTestClock.start + 300
        #expect(verifier.verify(token: Substring(hs256(#"{"sub":"ana","exp":\#(exp),"iss":"https://app.example"}"#))).isAccepted)
        expectInvalid(verifier.verify(token: Substring(hs256(#"{"sub":"ana","exp":\#(exp),"iss":"https://evil.example"}"#))))
        expectInvalid(verifier.verify(token: Substring(hs256(#"{"sub":"ana","exp":\#(exp)}"#))))
    }

    // MARK: Time

    @Test func expiryHasSixtySecondsOfLeeway() throws {
        let clock = TokenTestClock()
        let exp = TokenTestClock.start - 60
        // One token per instant: each is verified afresh, not answered by the cache.
        clock.set(Double(TokenTestClock.start) - 0.001)
        #expect(try verifier(clock: clock).verify(token: Substring(hs256(#"{"sub":"ana","exp":\#(exp)}"#))).isAccepted)
        clock.set(Double(TokenTestClock.start))
        #expect(try verifier(clock: clock).verify(token: Substring(hs256(#"{"sub":"ana","exp":\#(exp)}"#))) == .failure(.expired))
        #expect(try verifier(clock: clock).verify(token: Substring(hs256(#"{"sub":"ana","exp":\#(exp - 3600)}"#))) == .failure(.expired))
        #expect(try verifier(clock: clock).verify(token: Substring(hs256(#"{"sub":"ana","exp":\#(exp).5}"#))).isAccepted)
    }

    @Test func aCustomLeewayIsApplied() throws {
        let clock = TokenTestClock()
        let verifier = TokenVerifier(keys: try keys(), audience: nil, issuer: nil, leeway: .zero, clock: clock.reader)
        #expect(verifier.verify(token: Substring(hs256(#"{"sub":"ana","exp":\#(TokenTestClock.start)}"#))) == .failure(.expired))
        #expect(verifier.verify(token: Substring(hs256(#"{"sub":"ana","exp":\#(TokenTestClock.start + 1)}"#))).isAccepted)
    }

    @Test func notBeforeHasSixtySecondsOfLeeway() throws {
        let verifier = try verifier()
        let exp = TokenTestClock.start + 3600
        #expect(verifier.verify(token: Substring(hs256(#"{"sub":"ana","exp":\#(exp),"nbf":\#(TokenTestClock.start + 60)}"#))).isAccepted)
        expectInvalid(verifier.verify(token: Substring(hs256(#"{"sub":"ana","exp":\#(exp),"nbf":\#(TokenTestClock.start + 61)}"#))))
        #expect(verifier.verify(token: Substring(hs256(#"{"sub":"ana","exp":\#(exp),"nbf":\#(TokenTestClock.start - 86400)}"#))).isAccepted)
    }

    @Test func issuedAtInTheFutureBeyondLeewayIsRefused() throws {
        let verifier = try verifier()
        let exp = TokenTestClock.start + 3600
        #expect(verifier.verify(token: Substring(hs256(#"{"sub":"ana","exp":\#(exp),"iat":\#(TokenTestClock.start + 60)}"#))).isAccepted)
        expectInvalid(verifier.verify(token: Substring(hs256(#"{"sub":"ana","exp":\#(exp),"iat":\#(TokenTestClock.start + 60).5}"#))))
        #expect(verifier.verify(token: Substring(hs256(#"{"sub":"ana","exp":\#(exp),"iat":\#(TokenTestClock.start - 10)}"#))).isAccepted)
    }

    @Test func anExpiredTokenWithABadSignatureIsInvalidNotExpired() throws {
        let token = hs256(#"{"sub":"ana","exp":\#(TokenTestClock.start - 3600)}"#, secret: Array("not-the-configured-secret-at-all-really".utf8))
        expectInvalid(try verifier().verify(token: Substring(token)))
    }

    // MARK: Size

    @Test func tokensUpToEightKiBAreAcceptedAndLongerOnesRefused() throws {
        let verifier = try verifier()
        func token(padding: Int) -> String {
            hs256(#"{"sub":"ana","exp":\#(TokenTestClock.start + 300),"pad":"\#(String(repeating: "x", count: padding))"}"#)
        }
        // Find the padding that makes the token exactly 8192 bytes (base64
        // grows in steps, so try a few around the estimate).
        let base = token(padding: 0).utf8.count
        var exact: String?
        var padding = max(0, (8192 - base) * 3 / 4 - 4)
        while exact == nil, padding < 8192 {
            let candidate = token(padding: padding)
            if candidate.utf8.count == 8192 { exact = candidate }
            if candidate.utf8.count > 8192 { break }
            padding += 1
        }
        let atLimit = try #require(exact)
        #expect(verifier.verify(token: Substring(atLimit)).isAccepted)
        let over = token(padding: padding + 1)
        #expect(over.utf8.count > 8192)
        expectInvalid(verifier.verify(token: Substring(over)))
        expectInvalid(verifier.verify(authorization: Substring("Bearer " + String(repeating: "a", count: 100_000))))
    }

    // MARK: Reasons

    @Test func rejectionReasonsNeverQuoteTheToken() throws {
        let verifier = try verifier(audience: "chat", issuer: "app")
        let exp = TokenTestClock.start + 300
        let tokens = [
            hs256(#"{"sub":"secret-user","exp":\#(exp),"aud":"secret-audience","iss":"app"}"#),
            hs256(#"{"sub":"secret-user","exp":\#(exp),"aud":"chat","iss":"secret-issuer"}"#),
            hs256(#"{"sub":"secret user","exp":\#(exp),"aud":"chat","iss":"app"}"#),
            hs256(#"{"sub":"secret-user","exp":"secret-exp","aud":"chat","iss":"app"}"#),
            hs256(#"{"sub":"secret-user","exp":\#(exp)}"#, kid: "secret-kid"),
            LiteralTokenMinter.sign(header: #"{"alg":"secret-alg","kid":"k1"}"#, claims: "{}") { _ in [1, 2, 3] },
            LiteralTokenMinter.sign(header: #"{"alg":"HS256","kid":"k1","secret-key":1,"secret-key":2}"#, claims: "{}") { _ in [1] },
            hs256(#"{"sub":"secret-user","exp":\#(exp),"secret-claim":1,"secret-claim":2}"#),
        ]
        for token in tokens {
            guard case .failure(.invalid(let reason)) = verifier.verify(token: Substring(token)) else {
                Issue.record("expected invalid_token for \(token)")
                continue
            }
            #expect(!reason.contains("secret"), "\(reason)")
            for part in token.split(separator: ".") where part.count >= 4 {
                #expect(!reason.contains(part), "\(reason)")
            }
        }
    }

    // MARK: Splitting the header

    /// The byte split (`BearerHeader`) decides exactly as the `Character`
    /// path it replaced for ASCII headers: the same caller or the same
    /// rejection, reason included, for headers built from the pieces a
    /// header can have (whitespace, schemes, tokens, junk) and for random
    /// ASCII; a header with other bytes goes to the `Character` path.
    @Test func theByteSplitDecidesAsTheCharacterPath() throws {
        let verifier = try verifier()
        let valid = hs256(#"{"sub":"ana","exp":\#(TokenTestClock.start + 300)}"#)
        let pieces = ["", " ", "\t", "  \t", "Bearer", "bearer", "BEARER", "BeArEr", "Basic", "Bearerx", "beare",
                      valid, "a.b.c", "x", "é", "\u{301}", " \u{301}", String(repeating: "A", count: 8193)]
        var generator = SplitMix64(seed: 0xBEA2E2)
        var headers: [String] = []
        for first in pieces {
            for second in pieces { headers.append(first + second); headers.append(first + " " + second) }
        }
        for _ in 0..<3000 {
            let count = Int(generator.next() % 6)
            headers.append((0..<count).map { _ in pieces[Int(generator.next() % UInt64(pieces.count))] }.joined())
            let bytes = (0..<Int(generator.next() % 40)).map { _ in UInt8(truncatingIfNeeded: generator.next() % 0x7F) }
            headers.append(String(decoding: bytes, as: UTF8.self))
        }
        var bySplit = 0
        for header in headers {
            let split = Array(header.utf8).withUnsafeBufferPointer { BearerHeader.split($0) }
            let byCharacter = verifier.verifyByCharacter(authorization: Substring(header), mayCheckSignature: { true })
            if split != .notASCII { bySplit += 1 }
            #expect(verifier.verify(authorization: Substring(header)) == byCharacter, "\(header.debugDescription)")
        }
        #expect(bySplit > headers.count / 2)
        // A space, a tab or a byte above ASCII at each place of a token,
        // inside or outside the eight-byte words the split reads first
        // (not first or last, where whitespace is trimmed).
        for place in 1..<23 {
            for (byte, expected) in [(UInt8(0x20), BearerHeader.Split.refused(BearerHeader.spacesInside)),
                                     (0x09, .refused(BearerHeader.spacesInside)), (0xC3, .notASCII)] {
                var header = Array("Bearer abcdefghijklmnopqrstuvwx".utf8)
                header[7 + place] = byte
                #expect(header.withUnsafeBufferPointer { BearerHeader.split($0) } == expected, "byte \(byte) at \(place)")
            }
        }
        #expect(Array("Bearer é".utf8).withUnsafeBufferPointer { BearerHeader.split($0) } == .notASCII)
        #expect(Array(" Bearer \(valid)\t".utf8).withUnsafeBufferPointer { BearerHeader.split($0) }
                    == .token(8..<(8 + valid.utf8.count)))
    }

    // MARK: Garbage

    @Test func garbageNeverCrashes() throws {
        let verifier = try verifier()
        var generator = SplitMix64(seed: 0x5EED)
        let valid = Array(hs256(#"{"sub":"ana","exp":\#(TokenTestClock.start + 300)}"#).utf8)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.=+/ \t\"{}".utf8)
        var accepted = 0
        for round in 0..<3000 {
            var bytes: [UInt8]
            switch round % 3 {
            case 0:  // random bytes of any value
                bytes = (0..<Int(generator.next() % 200)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            case 1:  // random characters from the token alphabet
                bytes = (0..<Int(generator.next() % 400)).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] }
            default:  // a valid token with a few bytes changed
                bytes = valid
                for _ in 0..<(1 + Int(generator.next() % 3)) {
                    bytes[Int(generator.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: generator.next())
                }
            }
            if bytes == valid { continue }  // a change that wrote back the same byte
            let text = String(decoding: bytes, as: UTF8.self)
            if case .success = verifier.verify(authorization: Substring("Bearer " + text)) { accepted += 1 }
            _ = verifier.verify(authorization: Substring(text))
        }
        // Any changed byte breaks the signature or the strict base64url
        // (even one in a character's unused low bits), so nothing verifies.
        #expect(accepted == 0)
        #expect(verifier.verify(token: Substring(String(decoding: valid, as: UTF8.self))).isAccepted)
    }
}

// MARK: - Helpers shared by the token tests

/// A clock the tests set by hand, so time-dependent checks run without waiting.
final class TokenTestClock: Sendable {
    /// 2027-01-15, a fixed "now" for tokens minted relative to it.
    static let start = 1_800_000_000
    private let seconds = Mutex(Double(TokenTestClock.start))

    var reader: @Sendable () -> Double { { self.seconds.withLock { $0 } } }

    func set(_ value: Double) { seconds.withLock { $0 = value } }
    func advance(by delta: Double) { seconds.withLock { $0 += delta } }
}

/// Builds compact JWS tokens from literal JSON, so a test controls every byte
/// of the header and claims (types, duplicates, order) that a JWT library
/// would normalize away. Signing uses `Crypto`; the independent check
/// against another implementation is the PyJWT interop suite.
enum LiteralTokenMinter {
    static func encode(_ json: String) -> String {
        Base64URL.encode(Array(json.utf8))
    }

    static func sign(header: String, claims: String, signature: ([UInt8]) throws -> [UInt8]) rethrows -> String {
        let input = encode(header) + "." + encode(claims)
        return input + "." + Base64URL.encode(try signature(Array(input.utf8)))
    }

    static func hs256(_ claims: String, kid: String?, secret: [UInt8]) -> String {
        let header = kid.map { #"{"alg":"HS256","typ":"JWT","kid":"\#($0)"}"# } ?? #"{"alg":"HS256","typ":"JWT"}"#
        return sign(header: header, claims: claims) { input in
            Array(HMAC<SHA256>.authenticationCode(for: input, using: SymmetricKey(data: secret)))
        }
    }

    static func es256(_ claims: String, kid: String, key: P256.Signing.PrivateKey) -> String {
        sign(header: #"{"alg":"ES256","typ":"JWT","kid":"\#(kid)"}"#, claims: claims) { input in
            Array(try! key.signature(for: input).rawRepresentation)
        }
    }
}

extension Result where Success == Caller, Failure == TokenRejection {
    /// True when the token verified, whoever it names.
    var isAccepted: Bool {
        if case .success = self { return true }
        return false
    }
}
