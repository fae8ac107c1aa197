import Foundation
import HTTPCore
import HistoryAPI
import HistoryTestSupport
import HistoryWiring
import Testing

/// "A removed member loses access at once: its parked long-polls on that
/// conversation are answered 404 within one second", also when the poll is
/// parked on one instance and the removal goes through another: the
/// removing instance can only answer its own polls, so the other hears the
/// commit from PostgreSQL (LISTEN) and asks again.
@Suite("A removal through one instance ends the member's polls on another", .postgresCluster)
struct CrossInstanceRevocationTests {
    @Test(.timeLimit(.minutes(2)))
    func aPollParkedOnAIsAnswered404WhenBRemovesItsUser() throws {
        let minter = TokenMinter()
        try withTemporaryDirectory { keys in
            let secretPath = keys.url.appending(path: "hs256.keys").path
            try minter.secretFile.write(toFile: secretPath, atomically: true, encoding: .utf8)
            var configuration = RunningServer.defaultConfiguration
            configuration.jwtHS256SecretFile = secretPath
            configuration.jwtAudience = TokenMinter.audience
            try withTwoInstances(configuration) { a, b in

                let owner = minter.user("olga"), member = minter.user("bob")
                let throughB = try HTTPClientConnection(host: "127.0.0.1", port: b.port, timeout: .seconds(10))
                defer { throughB.close() }
                #expect(try throughB.createConversation("room", ownedBy: owner) == 201)
                #expect(try throughB.call(.put, "/v1/conversations/room/members/bob", token: owner, json: "{}").status == 201)
                let version = try throughB.call(.post, "/v1/conversations/room/messages", token: owner,
                                                json: #"{"sender":"olga","body":"hi"}"#)
                #expect(version.status == 201)

                // bob's long-poll on the room's events, and a page read, both on A.
                let poll = try HTTPClientConnection(host: "127.0.0.1", port: a.port, timeout: .seconds(60))
                defer { poll.close() }
                var headers: HTTPHeaders = ["Host": "127.0.0.1"]
                headers.add(name: "Authorization", value: "Bearer \(member)")
                try poll.send(HTTPRequest(method: .get, target: "/v1/conversations/room/events?since=1&wait=30", headers: headers))
                #expect(eventually { a.parkedLongPollCount == 1 })

                #expect(try throughB.call(.delete, "/v1/conversations/room/members/bob", token: owner).status == 200)
                // Without the removal heard from PostgreSQL, the poll would
                // answer 200 at the end of its 30 s wait.
                let answer = try poll.receive()
                #expect(answer.status == 404)
                #expect(answer.bodyText.contains("conversation_not_found"))
                #expect(eventually { a.parkedLongPollCount == 0 })
            }
        }
    }
}
