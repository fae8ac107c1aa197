import Foundation
import HTTPCore
import HistoryAPI
import HistoryStore
import HistoryTestSupport
import HistoryWiring
import Testing

/// `PUT /v1/conversations/{cid}/typing` and `typing=1` on the events
/// long-poll (docs/API.md, "Live"), over real sockets, on the store
/// `HISTORY_TEST_STORE` names. Ana (owner) and bo (member) share "room";
/// carl is a stranger.
@Suite("Typing")
struct TypingAPITests {
    @Test(.timeLimit(.minutes(2)))
    func aTyperWakesATypingPollAndShowsInItsAnswer() throws {
        try withTypingRoom { server, tokens in
            let ana = try server.connect(), bo = try server.connect(timeout: .seconds(60))
            defer { ana.close(); bo.close() }
            let version = try bo.typingFeed("room", token: tokens.bo).version
            // Parked with typing=1: the list is empty now, so only a change answers.
            try bo.send(HTTPRequest(method: .get, target: "/v1/conversations/room/events?since=\(version)&wait=30&typing=1",
                                    headers: ["Host": "127.0.0.1", "Authorization": "Bearer \(tokens.bo)"]))
            #expect(eventually { server.application.parkedLongPollCount == 1 })
            #expect(try ana.typing("room", true, token: tokens.ana).status == 204)
            let answer = try TypingFeed(bo.receive())
            // A timed-out poll would show no one: ana's 6 s would have run out.
            #expect(answer.typing == ["ana"])
            #expect(answer.events == 0 && answer.version == version)

            // Both typing: everyone, in user order; without typing=1 no list.
            #expect(try bo.typing("room", true, token: tokens.bo).status == 204)
            #expect(try bo.typingFeed("room", token: tokens.bo).typing == ["ana", "bo"])
            let plain = try bo.call(.get, "/v1/conversations/room/events?since=0", token: tokens.bo)
            #expect(plain.status == 200 && !plain.bodyText.contains("typing"))
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func typingExpiresAndTheExpiryWakesThePoll() throws {
        try withTypingRoom(TypingTiming(lasts: .seconds(3), quietPeriod: .milliseconds(300))) { server, tokens in
            let ana = try server.connect(), bo = try server.connect(timeout: .seconds(60))
            defer { ana.close(); bo.close() }
            #expect(try ana.typing("room", true, token: tokens.ana).status == 204)
            let before = try bo.typingFeed("room", token: tokens.bo)
            #expect(before.typing == ["ana"])
            let started = ContinuousClock.now
            let answer = try TypingFeed(bo.call(
                .get, "/v1/conversations/room/events?since=\(before.version)&wait=30&typing=1", token: tokens.bo))
            #expect(answer.typing == [])
            // Answered by the expiry, not by the 30 s wait.
            #expect(ContinuousClock.now - started < .seconds(20))
            #expect(eventually { (server.application.store as? StoreFront)?.typingBoard.entryCount == 0 })

            // Renewed (outside the quiet period), a typer stays past its first
            // 3 s. Renewed half a second before they run out and looked at
            // just after: only a pause of over 2 s could reach the end of the
            // renewed 3 s (a pause before the renewal makes it a new call).
            #expect(try ana.typing("room", true, token: tokens.ana).status == 204)
            let first = ContinuousClock.now  // the server took the call before this
            Self.sleep(until: first + .milliseconds(2_500))
            #expect(try ana.typing("room", true, token: tokens.ana).status == 204)
            Self.sleep(until: first + .milliseconds(3_100))
            #expect(try bo.typingFeed("room", token: tokens.bo).typing == ["ana"])
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func aStreamCarriesEveryChangeOfTheListAsTypingEvents() throws {
        // 5 s to last, bo 2.5 s after ana: each margin below (bo types and
        // posts before ana's time runs out; ana's and bo's run out in two
        // sweeps, not one) outlasts a pause of 2 s on a loaded machine.
        try withTypingRoom(TypingTiming(lasts: .seconds(5), quietPeriod: .milliseconds(300))) { server, tokens in
            let client = try server.connect()
            defer { client.close() }
            #expect(try client.typing("room", true, token: tokens.ana).status == 204)
            let anaTyped = ContinuousClock.now
            let stream = try EventStreamClient(port: server.port, target: "/v1/conversations/room/events?since=0",
                                               headers: [("Authorization", "Bearer \(tokens.bo)")], timeout: .seconds(20))
            #expect(try stream.head().status == 200)
            // The list as the stream opens, then each change: bo starts, a
            // post (a feed event with its id), ana's 5 s run out, bo stops.
            let opened = try stream.nextEvent()
            #expect(opened.type == "typing" && opened.id == nil)
            #expect(opened.json["typing"] as? [String] == ["ana"])
            // Later: ana's 5 s run out well before bo's.
            Self.sleep(until: anaTyped + .milliseconds(2_500))
            #expect(try client.typing("room", true, token: tokens.bo).status == 204)
            #expect(try stream.nextEvent().json["typing"] as? [String] == ["ana", "bo"])
            #expect(try client.call(.post, "/v1/conversations/room/messages", token: tokens.bo,
                                    json: #"{"body":"hi"}"#).status == 201)
            let posted = try stream.nextEvent()
            #expect(posted.type == "created" && posted.id == "1")
            let expired = try stream.nextEvent()
            #expect(expired.type == "typing" && expired.json["typing"] as? [String] == ["bo"])
            #expect(try client.typing("room", false, token: tokens.bo).status == 204)
            #expect(try stream.nextEvent().json["typing"] as? [String] == [])
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func aCallWithinTheQuietPeriodIsAnsweredAndNotBroadcast() throws {
        // A quiet period of 4 s (the contract's is 2 s) and a poll of 3 s:
        // the calls meant to fall inside the period, and the poll seen
        // parked before its wait ends, both outlast a pause of 2 s on a
        // loaded machine.
        try withTypingRoom(TypingTiming(lasts: .seconds(30), quietPeriod: .seconds(4))) { server, tokens in
            let ana = try server.connect(), bo = try server.connect(timeout: .seconds(60))
            defer { ana.close(); bo.close() }
            #expect(try ana.typing("room", true, token: tokens.ana).status == 204)
            let shown = try bo.typingFeed("room", token: tokens.bo)
            #expect(shown.typing == ["ana"])
            // Within the period of the accepted call: 204, and nothing changes.
            #expect(try ana.typing("room", false, token: tokens.ana).status == 204)
            #expect(try bo.typingFeed("room", token: tokens.bo).typing == ["ana"])
            // A poll parked now is not woken by another call inside the period.
            let started = ContinuousClock.now
            try bo.send(HTTPRequest(method: .get,
                                    target: "/v1/conversations/room/events?since=\(shown.version)&wait=3&typing=1",
                                    headers: ["Host": "127.0.0.1", "Authorization": "Bearer \(tokens.bo)"]))
            #expect(eventually { server.application.parkedLongPollCount == 1 })
            #expect(try ana.typing("room", false, token: tokens.ana).status == 204)
            let quiet = try TypingFeed(bo.receive())
            #expect(quiet.typing == ["ana"])
            #expect(ContinuousClock.now - started >= .milliseconds(2_900))
            // After the period the same call is accepted and broadcast.
            Self.sleep(until: started + .milliseconds(4_100))
            #expect(try ana.typing("room", false, token: tokens.ana).status == 204)
            #expect(try bo.typingFeed("room", token: tokens.bo).typing == [])
        }
    }

    @Test
    func aStrangerGetsTheAnswerOfAMissingConversationAndABadBody400() throws {
        try withTypingRoom { server, tokens in
            let client = try server.connect()
            defer { client.close() }
            let stranger = try client.typing("room", true, token: tokens.carl)
            let missing = try client.typing("nowhere", true, token: tokens.carl)
            expectError(stranger, 404, "conversation_not_found")
            #expect(stranger.bodyText == missing.bodyText.replacingOccurrences(of: "nowhere", with: "room"))
            #expect(try client.typingFeed("room", token: tokens.bo).typing == [])
            // A stranger's poll with typing=1 is refused like any read.
            expectError(try client.call(.get, "/v1/conversations/room/events?typing=1", token: tokens.carl),
                        404, "conversation_not_found")

            for body in ["{}", #"{"typing":"yes"}"#, #"{"typing":1}"#, #"{"typing":null}"#] {
                expectError(try client.call(.put, "/v1/conversations/room/typing", token: tokens.ana, json: body),
                            400, "bad_request")
            }
            for body in ["typing", "[true]", #"{"typing":true"#] {
                expectError(try client.call(.put, "/v1/conversations/room/typing", token: tokens.ana, json: body),
                            400, "invalid_json")
            }
            expectError(try client.call(.get, "/v1/conversations/room/events?typing=yes", token: tokens.ana),
                        400, "bad_request")
            #expect(try client.typingFeed("room", token: tokens.bo).typing == [])
        }
    }

    @Test
    func aRemovedMemberLeavesTheListAtOnce() throws {
        try withTypingRoom(TypingTiming(lasts: .seconds(30))) { server, tokens in
            let client = try server.connect()
            defer { client.close() }
            #expect(try client.typing("room", true, token: tokens.bo).status == 204)
            #expect(try client.typingFeed("room", token: tokens.ana).typing == ["bo"])
            #expect(try client.call(.delete, "/v1/conversations/room/members/bo", token: tokens.ana).status == 200)
            #expect(try client.typingFeed("room", token: tokens.ana).typing == [])
            // Removed, bo may not type there any more.
            expectError(try client.typing("room", true, token: tokens.bo), 404, "conversation_not_found")
        }
    }

    @Test
    func openModeHasNoOneToShow() throws {
        try withOpenServer({ _ in }) { server in
            let client = try server.connect()
            defer { client.close() }
            try client.createConversation("room")
            expectError(try client.typing("room", true, token: nil), 403, "forbidden")
        }
    }

    @Test
    func theBoardKeepsAtMostItsCaps() throws {
        let timing = TypingTiming(lasts: .seconds(4), quietPeriod: .milliseconds(200),
                                  maximumPerConversation: 3, maximumEntries: 5)
        try withTypingRoom(timing, members: (1...8).map { "u\($0)" }) { server, tokens in
            let client = try server.connect()
            defer { client.close() }
            let board = try #require((server.application.store as? StoreFront)?.typingBoard)
            for user in 1...8 {
                #expect(try client.typing("room", true, token: tokens.minter.user("u\(user)")).status == 204)
            }
            // The first three are shown; the others were answered and dropped.
            #expect(try client.typingFeed("room", token: tokens.bo).typing == ["u1", "u2", "u3"])
            for user in 1...8 {
                #expect(try client.typing("other", true, token: tokens.minter.user("u\(user)")).status == 204)
            }
            #expect(board.entryCount == 5)
            #expect(try client.typingFeed("other", token: tokens.bo).typing == ["u1", "u2"])
            // Expired and past their quiet period, all are swept.
            #expect(eventually { board.entryCount == 0 })
            #expect(try client.typingFeed("room", token: tokens.bo).typing == [])
        }
    }
}

extension TypingAPITests {
    /// Sleeps until `instant` (at once when it has passed).
    static func sleep(until instant: ContinuousClock.Instant) {
        let left = instant - .now
        if left > .zero { Thread.sleep(forTimeInterval: Double(left.components.seconds) + Double(left.components.attoseconds) / 1e18) }
    }
}

/// The tokens of a typing test.
struct TypingTokens {
    let minter: TokenMinter
    var ana: String { minter.user("ana") }
    var bo: String { minter.user("bo") }
    var carl: String { minter.user("carl") }
}

/// A tokens-mode server with "room" (ana its owner, bo and `members` in
/// it) and "other" (the same members), its typing board on `timing`.
func withTypingRoom(_ timing: TypingTiming = .standard, members: [String] = [],
                    _ body: (RunningServer, TypingTokens) throws -> Void) throws {
    try withTokenServer { server, minter in
        let tokens = TypingTokens(minter: minter)
        try #require((server.application.store as? StoreFront)?.typingBoard).use(timing)
        let client = try server.connect()
        defer { client.close() }
        for room in ["room", "other"] {
            #expect(try client.createConversation(room, ownedBy: tokens.ana) == 201)
            for member in ["bo"] + members {
                #expect(try client.call(.put, "/v1/conversations/\(room)/members/\(member)", token: minter.admin(),
                                        json: "{}").status == 201)
            }
        }
        try body(server, tokens)
    }
}

/// An events answer with `typing=1`, read with Foundation's parser.
struct TypingFeed {
    let typing: [String]?
    let events: Int
    let version: Int64

    init(_ response: HTTPClientResponse, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(response.status == 200, "\(response.bodyText)", sourceLocation: sourceLocation)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
        typing = object["typing"] as? [String]
        events = (object["events"] as? [Any])?.count ?? -1
        version = (object["version"] as? NSNumber)?.int64Value ?? -1
    }
}

extension HTTPClientConnection {
    func typing(_ conversation: String, _ typing: Bool, token: String?) throws -> HTTPClientResponse {
        try call(.put, "/v1/conversations/\(conversation)/typing", token: token, json: #"{"typing":\#(typing)}"#)
    }

    /// The conversation's feed from its start with `typing=1`, no wait.
    func typingFeed(_ conversation: String, token: String?) throws -> TypingFeed {
        try TypingFeed(call(.get, "/v1/conversations/\(conversation)/events?since=0&typing=1", token: token))
    }
}
