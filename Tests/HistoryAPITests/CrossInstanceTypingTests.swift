import Foundation
import HTTPCore
import HistoryAPI
import HistoryStore
import HistoryTestSupport
import HistoryWiring
import Testing

/// Typing on one instance, seen on another sharing its PostgreSQL: the
/// call reaches the other instance only as a notice (LISTEN/NOTIFY), and
/// each instance expires what it heard on its own clock.
@Suite("Typing across instances", .postgresCluster)
struct CrossInstanceTypingTests {
    @Test(.timeLimit(.minutes(2)))
    func aTyperOnAWakesAPollOnBAndExpiresThere() throws {
        let minter = TokenMinter()
        try withTemporaryDirectory { keys in
            let secretPath = keys.url.appending(path: "hs256.keys").path
            try minter.secretFile.write(toFile: secretPath, atomically: true, encoding: .utf8)
            var configuration = RunningServer.defaultConfiguration
            configuration.jwtHS256SecretFile = secretPath
            configuration.jwtAudience = TokenMinter.audience
            try withTwoInstances(configuration) { a, b in
                let timing = TypingTiming(lasts: .seconds(3), quietPeriod: .milliseconds(300))
                try #require(a.store as? StoreFront).typingBoard.use(timing)
                try #require(b.store as? StoreFront).typingBoard.use(timing)
                func connect(_ server: HistoryApplication) throws -> HTTPClientConnection {
                    try HTTPClientConnection(host: "127.0.0.1", port: server.port, timeout: .seconds(60))
                }
                let throughA = try connect(a), throughB = try connect(b)
                defer { throughA.close(); throughB.close() }
                let ana = minter.user("ana"), bo = minter.user("bo")
                #expect(try throughA.createConversation("room", ownedBy: ana) == 201)
                #expect(try throughA.call(.put, "/v1/conversations/room/members/bo", token: minter.admin(),
                                          json: "{}").status == 201)

                // Parked on B, woken by ana's call through A.
                let version = try throughB.typingFeed("room", token: bo).version
                let poll = try connect(b)
                defer { poll.close() }
                try poll.send(HTTPRequest(method: .get, target: "/v1/conversations/room/events?since=\(version)&wait=30&typing=1",
                                          headers: ["Host": "127.0.0.1", "Authorization": "Bearer \(bo)"]))
                #expect(eventually { b.parkedLongPollCount == 1 })
                #expect(try throughA.typing("room", true, token: ana).status == 204)
                #expect(try TypingFeed(poll.receive()).typing == ["ana"])

                // B expires what it heard: its poll is answered when the 3 s run out.
                let started = ContinuousClock.now
                let expired = try TypingFeed(throughB.call(
                    .get, "/v1/conversations/room/events?since=\(version)&wait=30&typing=1", token: bo))
                #expect(expired.typing == [])
                #expect(ContinuousClock.now - started < .seconds(20))

                // A stop is relayed too: bo types on B, stops there after the
                // quiet period, and A follows both (with 30 s to last, the
                // empty list on A can only come from the relayed stop).
                let long = TypingTiming(lasts: .seconds(30), quietPeriod: .milliseconds(300))
                try #require(a.store as? StoreFront).typingBoard.use(long)
                try #require(b.store as? StoreFront).typingBoard.use(long)
                // A's stream sees both as typing events.
                let stream = try EventStreamClient(port: a.port, target: "/v1/conversations/room/events?since=\(version)",
                                                   headers: [("Authorization", "Bearer \(ana)")], timeout: .seconds(20))
                #expect(try stream.head().status == 200)
                #expect(eventually { a.parkedLongPollCount == 1 })
                #expect(try throughB.typing("room", true, token: bo).status == 204)
                #expect(try stream.nextEvent().json["typing"] as? [String] == ["bo"])
                #expect(try throughA.typingFeed("room", token: ana).typing == ["bo"])
                Thread.sleep(forTimeInterval: 0.4)
                #expect(try throughB.typing("room", false, token: bo).status == 204)
                #expect(try stream.nextEvent().json["typing"] as? [String] == [])
                #expect(try throughA.typingFeed("room", token: ana).typing == [])
            }
        }
    }
}
