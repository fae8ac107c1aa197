import HistoryTestSupport
import Foundation
import HTTPCore
import HistoryAPI
import Testing

/// A conversation the caller is not a member of must look exactly like one
/// that does not exist: same status, same headers (but `Date`), same body,
/// on every route, whatever else the request gets wrong.
@Suite struct NonMemberTests {
    /// Requests on conversation `{cid}`, including malformed ones: a check
    /// that ran before the membership check, or after it only for existing
    /// conversations, would answer them differently.
    static let probes: [(method: HTTPMethod, target: String, json: String?)] = [
        (.get, "/v1/conversations/{cid}", nil),
        (.head, "/v1/conversations/{cid}", nil),
        (.get, "/v1/conversations/{cid}/messages", nil),
        (.get, "/v1/conversations/{cid}/messages?limit=0", nil),
        (.get, "/v1/conversations/{cid}/messages?around=1&before=2", nil),
        (.post, "/v1/conversations/{cid}/messages", #"{"body":"hi"}"#),
        (.post, "/v1/conversations/{cid}/messages", #"{"sender":"someone-else","body":"hi"}"#),
        (.post, "/v1/conversations/{cid}/messages", #"{"body":"#),
        (.patch, "/v1/conversations/{cid}/messages/1", #"{"body":"x"}"#),
        (.patch, "/v1/conversations/{cid}/messages/999", #"{"body":"x"}"#),
        (.patch, "/v1/conversations/{cid}/messages/abc", #"{"body":"x"}"#),
        (.delete, "/v1/conversations/{cid}/messages/1", nil),
        (.delete, "/v1/conversations/{cid}/messages/999", nil),
        (.get, "/v1/conversations/{cid}/events", nil),
        (.get, "/v1/conversations/{cid}/events?since=999999", nil),
        (.get, "/v1/conversations/{cid}/events?wait=5", nil),
        (.get, "/v1/conversations/{cid}/members", nil),
        (.get, "/v1/conversations/{cid}/members?after=!!", nil),
        (.put, "/v1/conversations/{cid}/members/nick", #"{"role":"owner"}"#),
        (.put, "/v1/conversations/{cid}/members/olga", #"{"role":"bogus"}"#),
        (.delete, "/v1/conversations/{cid}/members/nick", nil),
        (.delete, "/v1/conversations/{cid}/members/olga", nil),
        (.put, "/v1/conversations/{cid}", nil),
    ]

    @Test func aStrangerCannotTellAnExistingConversationFromAMissingOne() throws {
        try withTokenServer { server, minter in
            let client = try server.connect()
            defer { client.close() }
            let stranger = minter.user("nick")
            let cid = "secret-room"
            let target = { (template: String) in template.replacingOccurrences(of: "{cid}", with: cid) }

            var before: [String] = []
            for probe in Self.probes {
                before.append(try client.call(probe.method, target(probe.target), token: stranger, json: probe.json).withoutDate)
            }

            let owner = minter.user("olga")
            #expect(try client.createConversation(cid, ownedBy: owner) == 201)
            #expect(try client.call(.post, "/v1/conversations/\(cid)/messages", token: owner, json: #"{"body":"private"}"#).status == 201)

            for (probe, missing) in zip(Self.probes, before) {
                let existing = try client.call(probe.method, target(probe.target), token: stranger, json: probe.json).withoutDate
                #expect(existing == missing, "\(probe.method) \(probe.target)")
            }
            // And the conversation is really there for its owner.
            #expect(try client.call(.get, "/v1/conversations/\(cid)", token: owner).status == 200)
        }
    }

    @Test func aRemovedMemberIsAStrangerAgain() throws {
        try withTokenServer { server, minter in
            let client = try server.connect()
            defer { client.close() }
            let owner = minter.user("olga")
            let mia = minter.user("mia")
            #expect(try client.createConversation("room", ownedBy: owner) == 201)
            #expect(try client.call(.put, "/v1/conversations/room/members/mia", token: owner, json: "{}").status == 201)
            #expect(try client.call(.get, "/v1/conversations/room/messages", token: mia).status == 200)
            let removal = try client.call(.delete, "/v1/conversations/room/members/mia", token: owner)
            #expect(removal.status == 200 && removal.bodyText == #"{"removed":true}"#, "\(removal.bodyText)")
            let after = try client.call(.get, "/v1/conversations/room/messages", token: mia)
            let missing = try client.call(.get, "/v1/conversations/room/messages", token: minter.user("nick"))
            #expect(after.withoutDate == missing.withoutDate)
            expectError(after, 404, "conversation_not_found")
        }
    }
}
