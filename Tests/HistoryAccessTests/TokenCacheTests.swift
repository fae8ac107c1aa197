@preconcurrency import Crypto
import HistoryStore
import Testing
@testable import HistoryAccess

@Suite("VerifiedTokenCache")
struct TokenCacheTests {
    let secret = Array("a-secret-that-is-long-enough-for-hs256-0123".utf8)

    func verifier(clock: TokenTestClock, capacity: Int = 10_000) throws -> TokenVerifier {
        TokenVerifier(keys: try TokenKeys(hs256Secrets: [("k1", secret)]), audience: nil, issuer: nil,
                      clock: clock.reader, cacheCapacity: capacity)
    }

    @Test func aVerifiedTokenIsAnsweredFromTheCacheUntilExpiryPlusLeeway() throws {
        let clock = TokenTestClock()
        let verifier = try verifier(clock: clock)
        let token = Substring(LiteralTokenMinter.hs256(#"{"sub":"ana","exp":\#(TokenTestClock.start + 100)}"#, kid: "k1", secret: secret))
        #expect(verifier.verify(token: token) == .success(.user(UserID("ana")!)))
        #expect(verifier.cache.count == 1)
        let key = VerifiedTokenCache.key(for: Array(token.utf8))
        #expect(verifier.cache.lookup(key, now: Double(TokenTestClock.start)) == .verified(.user(UserID("ana")!)))

        clock.advance(by: 159.999)
        #expect(verifier.verify(token: token) == .success(.user(UserID("ana")!)))
        #expect(verifier.cache.count == 1)

        // Past exp + 60 s the cached entry answers "expired", and is dropped.
        clock.advance(by: 0.001)
        #expect(verifier.verify(token: token) == .failure(.expired))
        #expect(verifier.cache.count == 0)
        // Verified afresh, it is still expired.
        #expect(verifier.verify(token: token) == .failure(.expired))
        #expect(verifier.cache.count == 0)
    }

    @Test func rejectedTokensAreNotCached() throws {
        let clock = TokenTestClock()
        let verifier = try verifier(clock: clock)
        let forged = Substring(LiteralTokenMinter.hs256(#"{"sub":"ana","exp":\#(TokenTestClock.start + 100)}"#, kid: "k1",
                                                 secret: Array("some-other-secret-that-is-long-enough".utf8)))
        let expired = Substring(LiteralTokenMinter.hs256(#"{"sub":"ana","exp":\#(TokenTestClock.start - 100)}"#, kid: "k1", secret: secret))
        #expect(!verifier.verify(token: forged).isAccepted)
        #expect(verifier.verify(token: expired) == .failure(.expired))
        #expect(verifier.cache.count == 0)
    }

    @Test func anAdminTokenIsCachedAsAdmin() throws {
        let verifier = try verifier(clock: TokenTestClock())
        let token = Substring(LiteralTokenMinter.hs256(#"{"sub":"svc","scope":"admin","exp":\#(TokenTestClock.start + 100)}"#, kid: "k1", secret: secret))
        #expect(verifier.verify(token: token) == .success(.admin(subject: "svc")))
        #expect(verifier.verify(token: token) == .success(.admin(subject: "svc")))
    }

    @Test func theCacheIsBoundedAndEvictsTheOldestFirst() throws {
        let cache = VerifiedTokenCache(capacity: 3)
        let keys = (0..<5).map { VerifiedTokenCache.key(for: Array("token-\($0)".utf8)) }
        let callers = (0..<5).map { Caller.user(UserID("user\($0)")!) }
        for index in 0..<5 {
            cache.insert(keys[index], caller: callers[index], deadline: 1000)
            #expect(cache.count == min(index + 1, 3))
        }
        #expect(cache.lookup(keys[0], now: 0) == .miss)
        #expect(cache.lookup(keys[1], now: 0) == .miss)
        for index in 2..<5 {
            #expect(cache.lookup(keys[index], now: 0) == .verified(callers[index]))
        }
    }

    @Test func manyDistinctTokensStayWithinCapacity() throws {
        let cache = VerifiedTokenCache(capacity: 100)
        for index in 0..<10_000 {
            let key = VerifiedTokenCache.key(for: Array("token-\(index)".utf8))
            cache.insert(key, caller: .admin(subject: nil), deadline: Double(index % 7))
            // Expired entries are dropped when looked up, leaving stale order slots behind.
            if index % 3 == 0 { _ = cache.lookup(key, now: 100) }
            #expect(cache.count <= 100)
        }
        let newest = VerifiedTokenCache.key(for: Array("token-9998".utf8))  // not looked up, deadline 2
        #expect(cache.lookup(newest, now: 0) == .verified(.admin(subject: nil)))
    }

    @Test func reinsertingTheSameTokenKeepsOneEntry() throws {
        let cache = VerifiedTokenCache(capacity: 2)
        let key = VerifiedTokenCache.key(for: Array("same".utf8))
        for _ in 0..<1000 {
            cache.insert(key, caller: .admin(subject: nil), deadline: 10)
        }
        #expect(cache.count == 1)
        let other = VerifiedTokenCache.key(for: Array("other".utf8))
        cache.insert(other, caller: .admin(subject: "x"), deadline: 10)
        #expect(cache.count == 2)
        #expect(cache.lookup(key, now: 0) == .verified(.admin(subject: nil)))
    }

    @Test func capacityZeroDisablesCaching() throws {
        let verifier = try verifier(clock: TokenTestClock(), capacity: 0)
        let token = Substring(LiteralTokenMinter.hs256(#"{"sub":"ana","exp":\#(TokenTestClock.start + 100)}"#, kid: "k1", secret: secret))
        #expect(verifier.verify(token: token).isAccepted)
        #expect(verifier.cache.count == 0)
    }

    @Test func concurrentVerificationsAgree() async throws {
        let signingKey = P256.Signing.PrivateKey()
        let keys = try TokenKeys(hs256Secrets: [("k1", secret)],
                                 es256PublicKeyPEMs: [("e1", signingKey.publicKey.pemRepresentation)])
        let verifier = TokenVerifier(keys: keys, audience: nil, issuer: nil, clock: TokenTestClock().reader, cacheCapacity: 50)
        // Half HS256, half ES256, more tokens than the cache holds: workers
        // verify, hit, evict and re-verify at the same time.
        let tokens = (0..<200).map { index in
            let claims = #"{"sub":"user\#(index)","exp":\#(TokenTestClock.start + 100)}"#
            return Substring(index % 2 == 0 ? LiteralTokenMinter.hs256(claims, kid: "k1", secret: secret)
                                            : LiteralTokenMinter.es256(claims, kid: "e1", key: signingKey))
        }
        let mismatches = await withTaskGroup(of: Int.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    var mismatches = 0
                    for round in 0..<400 {
                        let index = (round * 7 + worker * 13) % tokens.count
                        if verifier.verify(token: tokens[index]) != .success(.user(UserID("user\(index)")!)) { mismatches += 1 }
                    }
                    return mismatches
                }
            }
            return await group.reduce(0, +)
        }
        #expect(mismatches == 0)
        #expect(verifier.cache.count <= 50)
    }
}
