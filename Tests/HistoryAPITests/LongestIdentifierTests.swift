import HistoryTestSupport
import HTTPCore
import HistoryStore
import Testing

/// Every answer that writes an identifier, with identifiers of the longest
/// length the rules allow and the shortest text beside them.
///
/// The JSON writers reserve room for an identifier as it is, since its
/// characters never need an escape, while the string writer used to check
/// for the worst case of any text (six bytes a byte): a member whose user id
/// had 32 bytes or more stopped the server (schemathesis found it with 63).
/// Each request here must be answered, and the server must still answer
/// after all of them.
@Suite struct LongestIdentifierTests {
    let conversation = String(repeating: "c", count: ConversationID.maximumLength)
    /// Every character a user id may hold, to the maximum length.
    let user = String(String(repeating: "Az09_.@-", count: 8).prefix(UserID.maximumLength))
    let other = String(repeating: "u", count: UserID.maximumLength)

    @Test func everyRouteAnswersTheLongestIdentifiersInOpenMode() throws {
        try withOpenServer({ _ in }) { server in
            let client = try server.connect()
            defer { client.close() }
            let c = conversation
            #expect(try client.call(.post, "/v1/conversations", json: #"{"id":"\#(c)","title":"\u0001"}"#).status == 201)
            let added = try client.call(.put, "/v1/conversations/\(c)/members/\(user)", json: "{}")
            #expect(added.status == 201)
            #expect(try added.decode(MemberBody.self).user_id == user)
            #expect(try client.call(.put, "/v1/conversations/\(c)/members/\(other)", json: #"{"role":"owner"}"#).status == 201)
            let members = try client.call(.get, "/v1/conversations/\(c)/members?limit=1000")
            #expect(members.status == 200)
            #expect(try members.decode(MemberPageBody.self).members.map(\.user_id).contains(user))

            let posted = try client.call(.post, "/v1/conversations/\(c)/messages", json: #"{"sender":"\#(user)","body":"b"}"#)
            #expect(posted.status == 201)
            #expect(try client.call(.post, "/v1/conversations/\(c)/messages", json: #"{"sender":"a","body":"\u0000"}"#).status == 201)
            for query in ["limit=200", "before=2", "after=0", "around=1", "after=0&before=3", "after=0&window=1"] {
                #expect(try client.call(.get, "/v1/conversations/\(c)/messages?\(query)").status == 200, "\(query)")
            }
            #expect(try client.call(.patch, "/v1/conversations/\(c)/messages/1", json: #"{"body":"x"}"#).status == 200)
            #expect(try client.call(.get, "/v1/conversations/\(c)/events?since=0").status == 200)
            #expect(try client.call(.put, "/v1/conversations/\(c)/members/\(user)/read", json: #"{"last_read_id":1}"#).status == 200)
            #expect(try client.call(.get, "/v1/users/\(user)/conversations").status == 200)
            #expect(try client.call(.get, "/v1/users/\(user)/events?since=0").status == 200)
            #expect(try client.call(.delete, "/v1/conversations/\(c)/messages/1").status == 200)
            #expect(try client.call(.delete, "/v1/conversations/\(c)/members/\(user)").status == 200)
            // The removal shows in the user's feed with the conversation's id.
            let feed = try client.call(.get, "/v1/users/\(user)/events?since=0")
            #expect(feed.status == 200 && feed.bodyText.contains(c))
            #expect(try client.call(.get, "/healthz").status == 200)
        }
    }

    @Test func aTokenWhoseSubjectIsAsLongAsAUserIDReadsItsOwnInbox() throws {
        try withTokenServer { server, minter in
            let client = try server.connect()
            defer { client.close() }
            let token = minter.user(user)
            let c = conversation
            #expect(try client.createConversation(c, ownedBy: token) == 201)
            #expect(try client.call(.put, "/v1/conversations/\(c)/members/\(other)", token: token, json: "{}").status == 201)
            #expect(try client.call(.post, "/v1/conversations/\(c)/messages", token: token,
                                    json: #"{"sender":"\#(user)","body":"b"}"#).status == 201)
            #expect(try client.call(.get, "/v1/conversations/\(c)/members", token: token).status == 200)
            #expect(try client.call(.get, "/v1/users/me/conversations", token: token).status == 200)
            #expect(try client.call(.get, "/v1/users/me/events?since=0", token: token).status == 200)
            #expect(try client.call(.get, "/healthz").status == 200)
        }
    }
}
