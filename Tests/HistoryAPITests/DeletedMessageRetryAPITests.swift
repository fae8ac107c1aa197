import HistoryTestSupport
import Foundation
import HTTPCore
import HistoryClient
import Testing

/// docs/API.md, limits: deleting a message erases everything derived from
/// its text, and a retry of its `client_id` then answers 200 with the
/// tombstone whatever body it carries, so retries cannot confirm a guess of
/// the deleted text.
@Suite("API: retries of a deleted message")
struct DeletedMessageRetryAPITests {
    @Test func rightAndWrongBodiesBothGetTheTombstone() throws {
        try withRunningServer(client: { client in
            _ = try client.createConversation("c")
            let original = #"{"sender":"ana","body":"the secret is 42","client_id":"k-1"}"#
            let posted = try client.post("/v1/conversations/c/messages", original)
            #expect(posted.status == 201)
            let id = try posted.decode(HistoryMessage.self).id
            // Before the delete a wrong body is still told apart.
            expectError(try client.post("/v1/conversations/c/messages", #"{"sender":"ana","body":"the secret is 41","client_id":"k-1"}"#),
                        409, "client_id_conflict")
            #expect(try client.delete("/v1/conversations/c/messages/\(id)").status == 200)

            for guess in [original, #"{"sender":"ana","body":"the secret is 41","client_id":"k-1"}"#,
                          #"{"sender":"eve","body":"anything","client_id":"k-1"}"#] {
                let retry = try client.post("/v1/conversations/c/messages", guess)
                #expect(retry.status == 200, "\(guess)")
                let tombstone = try retry.decode(HistoryMessage.self)
                #expect(tombstone.id == id)
                #expect(tombstone.deleted)
                #expect(tombstone.body == "")
            }
            #expect(try client.get("/v1/conversations/c/messages").messageIDs() == [id])
        })
    }
}
