import HistoryTestSupport
import Dispatch
import Foundation
import HTTPCore
import HistoryAPI
import HistoryClient
import HistoryStore
import HistoryWiring
import Testing

@Suite struct MemberAPITests {
    @Test func creatingAConversationMakesTheCallerItsOwner() throws {
        try withTokenServer { server, minter in
            let client = try server.connect()
            defer { client.close() }
            let created = try client.call(.post, "/v1/conversations", token: minter.user("olga"), json: "{}")
            #expect(created.status == 201)
            let id = try created.decode(HistoryConversation.self).id
            let list = try client.call(.get, "/v1/conversations/\(id)/members", token: minter.user("olga"))
            #expect(list.status == 200)
            let page = try list.decode(MemberPageBody.self)
            #expect(page.members.count == 1)
            #expect(page.members.first?.user_id == "olga")
            #expect(page.members.first?.role == "owner")
            #expect(page.members.first?.joined_at.isEmpty == false)
            #expect(page.has_more == false)
        }
    }

    @Test func putIsIdempotentAndPagesAreKeyset() throws {
        try withOpenServer({ _ in }) { server in
            let client = try server.connect()
            defer { client.close() }
            try client.createConversation("c")
            let added = try client.call(.put, "/v1/conversations/c/members/bob", json: "{}")
            #expect(added.status == 201)
            #expect(try added.decode(MemberBody.self).role == "member")
            let again = try client.call(.put, "/v1/conversations/c/members/bob", json: #"{"role":"member"}"#)
            #expect(again.status == 200)
            let promoted = try client.call(.put, "/v1/conversations/c/members/bob", json: #"{"role":"owner"}"#)
            #expect(promoted.status == 200)
            #expect(try promoted.decode(MemberBody.self).role == "owner")
            for user in ["amy", "cat", "dan"] {
                #expect(try client.call(.put, "/v1/conversations/c/members/\(user)").status == 201)
            }
            let first = try client.call(.get, "/v1/conversations/c/members?limit=2")
            #expect(try first.decode(MemberPageBody.self).members.map(\.user_id) == ["amy", "bob"])
            #expect(try first.decode(MemberPageBody.self).has_more == true)
            let second = try client.call(.get, "/v1/conversations/c/members?limit=2&after=bob")
            #expect(try second.decode(MemberPageBody.self).members.map(\.user_id) == ["cat", "dan"])
            #expect(try second.decode(MemberPageBody.self).has_more == false)

            let removed = try client.call(.delete, "/v1/conversations/c/members/cat")
            #expect(removed.status == 200 && removed.bodyText == #"{"removed":true}"#)
            let notThere = try client.call(.delete, "/v1/conversations/c/members/cat")
            #expect(notThere.status == 200 && notThere.bodyText == #"{"removed":false}"#)
        }
    }

    @Test(arguments: [
        ("/v1/conversations/c/members/bad%20id", #"{}"#, "invalid_user_id"),
        ("/v1/conversations/c/members/bob", #"{"role":"admin"}"#, "invalid_role"),
        ("/v1/conversations/c/members/bob", #"{"role":7}"#, "invalid_role"),
    ])
    func invalidPuts(_ target: String, _ json: String, _ code: String) throws {
        try withOpenServer({ _ in }) { server in
            let client = try server.connect()
            defer { client.close() }
            try client.createConversation("c")
            expectError(try client.call(.put, target, json: json), 400, code)
        }
    }

    @Test(arguments: [("after=a%20b", "invalid_cursor"), ("limit=0", "invalid_limit"), ("limit=1001", "invalid_limit")])
    func invalidListQueries(_ query: String, _ code: String) throws {
        try withOpenServer({ _ in }) { server in
            let client = try server.connect()
            defer { client.close() }
            try client.createConversation("c")
            expectError(try client.call(.get, "/v1/conversations/c/members?\(query)"), 400, code)
        }
    }

    @Test func membersOfAMissingConversation() throws {
        try withOpenServer({ _ in }) { server in
            let client = try server.connect()
            defer { client.close() }
            expectError(try client.call(.get, "/v1/conversations/nope/members"), 404, "conversation_not_found")
            expectError(try client.call(.put, "/v1/conversations/nope/members/bob", json: "{}"), 404, "conversation_not_found")
        }
    }

    @Test func anyMemberMayLeaveButNotRemoveOthers() throws {
        try withTokenServer { server, minter in
            let client = try server.connect()
            defer { client.close() }
            let owner = minter.user("olga")
            #expect(try client.createConversation("c", ownedBy: owner) == 201)
            for user in ["mia", "zed"] {
                #expect(try client.call(.put, "/v1/conversations/c/members/\(user)", token: owner, json: "{}").status == 201)
            }
            expectError(try client.call(.delete, "/v1/conversations/c/members/zed", token: minter.user("mia")), 403, "forbidden")
            expectError(try client.call(.put, "/v1/conversations/c/members/mia", token: minter.user("mia"), json: #"{"role":"owner"}"#),
                        403, "forbidden")
            let left = try client.call(.delete, "/v1/conversations/c/members/mia", token: minter.user("mia"))
            #expect(left.status == 200 && left.bodyText == #"{"removed":true}"#)
        }
    }

    @Test func aMemberReadsHistoryFromBeforeItJoined() throws {
        try withTokenServer { server, minter in
            let client = try server.connect()
            defer { client.close() }
            let owner = minter.user("olga")
            #expect(try client.createConversation("c", ownedBy: owner) == 201)
            #expect(try client.call(.post, "/v1/conversations/c/messages", token: owner, json: #"{"body":"early"}"#).status == 201)
            #expect(try client.call(.put, "/v1/conversations/c/members/late", token: owner, json: "{}").status == 201)
            let page = try client.call(.get, "/v1/conversations/c/messages", token: minter.user("late"))
            #expect(page.status == 200)
            #expect(try page.messageIDs() == [1])
        }
    }

    // MARK: - Sender

    @Test func theSenderIsTheTokensSubject() throws {
        try withTokenServer { server, minter in
            let client = try server.connect()
            defer { client.close() }
            let ana = minter.user("ana")
            #expect(try client.createConversation("c", ownedBy: ana) == 201)
            let omitted = try client.call(.post, "/v1/conversations/c/messages", token: ana, json: #"{"body":"hi"}"#)
            #expect(omitted.status == 201)
            #expect(try omitted.decode(HistoryMessage.self).sender == "ana")
            let same = try client.call(.post, "/v1/conversations/c/messages", token: ana, json: #"{"sender":"ana","body":"hi"}"#)
            #expect(same.status == 201)
            let other = try client.call(.post, "/v1/conversations/c/messages", token: ana, json: #"{"sender":"bob","body":"hi"}"#)
            expectError(other, 403, "sender_mismatch")
            // An admin still names the sender, and must.
            let admin = minter.admin()
            expectError(try client.call(.post, "/v1/conversations/c/messages", token: admin, json: #"{"body":"hi"}"#), 400, "invalid_sender")
            let asBob = try client.call(.post, "/v1/conversations/c/messages", token: admin, json: #"{"sender":"bob","body":"hi"}"#)
            #expect(asBob.status == 201)
            #expect(try asBob.decode(HistoryMessage.self).sender == "bob")
            // ...and moderates: edits and deletes anyone's message.
            #expect(try client.call(.patch, "/v1/conversations/c/messages/1", token: admin, json: #"{"body":"moderated"}"#).status == 200)
            #expect(try client.call(.delete, "/v1/conversations/c/messages/1", token: admin).status == 200)
        }
    }

    // MARK: - Long-polls

    @Test func aRemovedMembersParkedPollIsAnsweredNotFoundAtOnce() throws {
        try withTokenServer { server, minter in
            let client = try server.connect()
            defer { client.close() }
            let owner = minter.user("olga")
            let poller = try Self.parkedPoll(on: server, client: client, owner: owner, pollingAs: minter.user("mia"))
            defer { poller.close() }
            #expect(server.application.store.parkedWaitCount == 1)

            // Another member's poll on the same conversation stays parked.
            #expect(try client.call(.put, "/v1/conversations/c/members/zed", token: owner, json: "{}").status == 201)
            let removedAt = ContinuousClock.now
            #expect(try client.call(.delete, "/v1/conversations/c/members/mia", token: owner).status == 200)
            let answer = try poller.receive()
            let elapsed = ContinuousClock.now - removedAt
            expectError(answer, 404, "conversation_not_found")
            // At once, not at the end of its 30 s wait (a bound far below
            // that, yet above any pause of a loaded machine).
            #expect(elapsed < .seconds(10), "answered after \(elapsed)")
        }
    }

    @Test func anOwnersPollIsNotDisturbedByAnotherMembersRemoval() throws {
        try withTokenServer { server, minter in
            let client = try server.connect()
            defer { client.close() }
            let owner = minter.user("olga")
            let poller = try Self.parkedPoll(on: server, client: client, owner: owner, pollingAs: owner)
            defer { poller.close() }
            #expect(try client.call(.delete, "/v1/conversations/c/members/mia", token: owner).status == 200)
            // The owner's poll stays parked until a message wakes it.
            #expect(try client.call(.post, "/v1/conversations/c/messages", token: owner, json: #"{"body":"wake"}"#).status == 201)
            let answer = try poller.receive()
            #expect(answer.status == 200)
            #expect(try answer.messageIDs() == [1])
        }
    }

    /// Conversation `c` owned by `owner` with member `mia`, and a 30 s
    /// long-poll on it by `token`'s user, once the store holds it parked.
    private static func parkedPoll(on server: RunningServer, client: HTTPClientConnection, owner: String,
                                   pollingAs token: String) throws -> HTTPClientConnection {
        #expect(try client.createConversation("c", ownedBy: owner) == 201)
        #expect(try client.call(.put, "/v1/conversations/c/members/mia", token: owner, json: "{}").status == 201)
        let poller = try server.connect(timeout: .seconds(20))
        try poller.send(HTTPRequest(method: .get, target: "/v1/conversations/c/events?wait=30",
                                    headers: ["Authorization": "Bearer \(token)"]))
        _ = eventually { server.application.store.parkedWaitCount > 0 }
        return poller
    }
}

/// The members endpoints' bodies, as the contract spells them.
struct MemberBody: Decodable {
    let user_id: String
    let role: String
    let joined_at: String
}

struct MemberPageBody: Decodable {
    let members: [MemberBody]
    let has_more: Bool
}
