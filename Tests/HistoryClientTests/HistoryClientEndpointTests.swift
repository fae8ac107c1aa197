import Foundation
import HistoryClient
import HistoryTestSupport
import Testing

/// Every endpoint of docs/API.md through ChatHistoryClient, against the real server
/// on an ephemeral loopback port over a real SQLite file.
@Suite("ChatHistoryClient endpoints against the server")
struct HistoryClientEndpointTests {
    @Test func healthAndMetrics() async throws {
        try await withRunningServer { server in
            let health = try await server.client.health()
            #expect(health.isOK)
            _ = try await server.client.createConversation(id: "metrics")
            let metrics = try await server.client.metrics()
            #expect(metrics.contains("# TYPE history_http_requests_total counter"))
        }
    }

    @Test func createAndReadConversations() async throws {
        try await withRunningServer { server in
            let client = server.client
            let before = Date().addingTimeInterval(-5)
            let created = try await client.createConversation(id: "general", title: "General")
            #expect(created.id == "general")
            #expect(created.title == "General")
            #expect(created.messageCount == 0)
            #expect(created.oldestID == nil && created.newestID == nil)
            #expect(created.version == 0)
            #expect(created.createdAt > before && created.createdAt < Date().addingTimeInterval(5))
            #expect(try await client.conversation("general") == created)

            let generated = try await client.createConversation()
            #expect(!generated.id.isEmpty && generated.id != "general")
            #expect(generated.title == nil)

            await expectServerError(.conversationExists, status: 409) {
                try await client.createConversation(id: "general")
            }
            await expectServerError(.conversationNotFound, status: 404) {
                try await client.conversation("nobody-here")
            }
            // Escaped into one path segment, so it reaches the route and names no conversation.
            await expectServerError(.conversationNotFound, status: 404) {
                try await client.conversation("a/b ü")
            }
            await expectServerError(.invalidTitle, status: 400) {
                try await client.createConversation(id: "long", title: String(repeating: "t", count: 257))
            }
            await expectServerError(.invalidConversationID, status: 400) {
                try await client.createConversation(id: "no spaces")
            }
        }
    }

    @Test func appendWithClientIDAndReplyTo() async throws {
        try await withRunningServer { server in
            let client = server.client
            _ = try await client.createConversation(id: "c")
            let first = try await client.append(to: "c", sender: "ana", body: "hello", clientID: "k-1")
            #expect(first.wasCreated)
            #expect(first.message.sender == "ana" && first.message.body == "hello")
            #expect(first.message.clientID == "k-1")
            #expect(first.message.conversationID == "c")
            #expect(first.message.version == 1)
            #expect(!first.message.deleted && first.message.editedAt == nil && first.message.replyTo == nil)

            let retry = try await client.append(to: "c", sender: "ana", body: "hello", clientID: "k-1")
            #expect(!retry.wasCreated)
            #expect(retry.message == first.message)

            let reply = try await client.append(to: "c", sender: "ben", body: "hi!", replyTo: first.message.id)
            #expect(reply.wasCreated)
            #expect(reply.message.replyTo == first.message.id)
            #expect(reply.message.id > first.message.id)
            #expect(reply.message.clientID == nil)

            await expectServerError(.clientIDConflict, status: 409) {
                try await client.append(to: "c", sender: "ana", body: "something else", clientID: "k-1")
            }
            await expectServerError(.replyToNotFound, status: 422) {
                try await client.append(to: "c", sender: "ana", body: "x", replyTo: reply.message.id + 1000)
            }
            await expectServerError(.invalidBody, status: 400) {
                try await client.append(to: "c", sender: "ana", body: "")
            }
            await expectServerError(.invalidSender, status: 400) {
                try await client.append(to: "c", sender: String(repeating: "s", count: 65), body: "x")
            }
            await expectServerError(.conversationNotFound, status: 404) {
                try await client.append(to: "missing", sender: "ana", body: "x")
            }
            let conversation = try await client.conversation("c")
            #expect(conversation.messageCount == 2)
            #expect(conversation.oldestID == first.message.id && conversation.newestID == reply.message.id)
            #expect(conversation.version == 2)
        }
    }

    @Test func pagesWithEveryCursor() async throws {
        try await withRunningServer { server in
            let client = server.client
            _ = try await client.createConversation(id: "p")
            var ids: [Int64] = []
            for index in 0..<12 {
                ids.append(try await client.append(to: "p", sender: "ana", body: "m\(index)").message.id)
            }
            let newest = try await client.page(of: "p", .newest(limit: 5))
            #expect(newest.messages.map(\.id) == Array(ids.suffix(5)))
            #expect(newest.hasOlder && !newest.hasNewer)
            #expect(newest.oldestID == ids[7] && newest.newestID == ids[11])
            #expect(newest.version == 12)
            #expect(newest.anchor == nil && newest.reset == nil)

            let all = try await client.page(of: "p")
            #expect(all.messages.map(\.id) == ids)
            #expect(!all.hasOlder && !all.hasNewer)

            let before = try await client.page(of: "p", .before(ids[7], limit: 5))
            #expect(before.messages.map(\.id) == Array(ids[2..<7]))
            #expect(before.hasOlder && before.hasNewer)

            let after = try await client.page(of: "p", .after(ids[2], limit: 4))
            #expect(after.messages.map(\.id) == Array(ids[3..<7]))
            #expect(after.hasOlder && after.hasNewer)

            let between = try await client.page(of: "p", .between(after: ids[2], before: ids[6], limit: 10))
            #expect(between.messages.map(\.id) == Array(ids[3..<6]))
            #expect(!between.hasOlder && !between.hasNewer)

            let around = try await client.page(of: "p", .around(ids[5], limit: 5))
            #expect(around.messages.map(\.id) == Array(ids[3..<8]))
            #expect(around.anchor == HistoryPage.Anchor(id: ids[5], found: true, index: 2))

            let missing = try await client.page(of: "p", .around(ids[11] + 10_000, limit: 4))
            #expect(missing.anchor?.found == false && missing.anchor?.index == nil)

            let plain = try await client.page(of: "p", .after(ids[8], limit: 5, window: 5))
            #expect(plain.reset == false)
            #expect(plain.messages.map(\.id) == Array(ids[9...]))

            let reset = try await client.page(of: "p", .after(ids[1], limit: 5, window: 5))
            #expect(reset.reset == true)
            #expect(reset.messages.map(\.id) == Array(ids.suffix(5)))

            await expectServerError(.invalidCursor, status: 400) {
                try await client.page(of: "p", .before(-1))
            }
            await expectServerError(.invalidLimit, status: 400) {
                try await client.page(of: "p", .newest(limit: 201))
            }
            await expectServerError(.invalidWindow, status: 400) {
                try await client.page(of: "p", PageRequest(cursor: .before(ids[5]), window: 3))
            }
            await expectServerError(.conversationNotFound, status: 404) {
                try await client.page(of: "nope")
            }
        }
    }

    @Test func editAndDelete() async throws {
        try await withRunningServer { server in
            let client = server.client
            _ = try await client.createConversation(id: "e")
            let message = try await client.append(to: "e", sender: "ana", body: "typo").message
            let edited = try await client.edit(messageID: message.id, in: "e", body: "fixed")
            #expect(edited.body == "fixed")
            #expect(edited.editedAt != nil)
            #expect(edited.version == message.version + 1)
            #expect(edited.createdAt == message.createdAt)

            let deleted = try await client.delete(messageID: message.id, in: "e")
            #expect(deleted.deleted && deleted.body.isEmpty)
            #expect(deleted.id == message.id)
            let again = try await client.delete(messageID: message.id, in: "e")
            #expect(again == deleted)

            await expectServerError(.messageDeleted, status: 409) {
                try await client.edit(messageID: message.id, in: "e", body: "too late")
            }
            await expectServerError(.messageNotFound, status: 404) {
                try await client.edit(messageID: message.id + 1000, in: "e", body: "x")
            }
            await expectServerError(.invalidMessageID, status: 400) {
                try await client.delete(messageID: 0, in: "e")
            }
            let page = try await client.page(of: "e")
            #expect(page.messages == [deleted])
        }
    }

    @Test func eventsWithEveryFilter() async throws {
        try await withRunningServer { server in
            let client = server.client
            _ = try await client.createConversation(id: "ev")
            var ids: [Int64] = []
            for index in 0..<5 {
                ids.append(try await client.append(to: "ev", sender: "ana", body: "m\(index)").message.id)
            }
            _ = try await client.edit(messageID: ids[1], in: "ev", body: "edited")
            _ = try await client.delete(messageID: ids[3], in: "ev")

            let everything = try await client.events(of: "ev", EventQuery(since: 0))
            // Compacted: one event per message, in the order of its last change.
            #expect(everything.events.map(\.message.id) == [ids[0], ids[2], ids[4], ids[1], ids[3]])
            #expect(everything.events.allSatisfy { $0.kind == .created })
            #expect(everything.events.map(\.version) == everything.events.map(\.message.version))
            #expect(!everything.hasMore && everything.version == 7)

            let sinceFive = try await client.events(of: "ev", EventQuery(since: 5))
            #expect(sinceFive.events.map(\.kind) == [.edited, .deleted])
            #expect(sinceFive.events.map(\.message.id) == [ids[1], ids[3]])

            let limited = try await client.events(of: "ev", EventQuery(since: 0, limit: 2))
            #expect(limited.events.count == 2 && limited.hasMore)
            #expect(limited.version == limited.events.last?.version)

            let ranged = try await client.events(of: "ev", EventQuery(since: 0, minID: ids[1], maxID: ids[2]))
            #expect(Set(ranged.events.map(\.message.id)) == [ids[1], ids[2]])

            let idle = try await client.events(of: "ev", EventQuery(since: 7, wait: .milliseconds(100)))
            #expect(idle.events.isEmpty && idle.version == 7 && !idle.hasMore)

            // A long-poll parked on version 7 is answered by the next append.
            async let parked = client.events(of: "ev", EventQuery(since: 7, wait: .seconds(20)))
            try await Task.sleep(for: .milliseconds(200))
            let posted = try await client.append(to: "ev", sender: "ben", body: "wake up").message
            let woken = try await parked
            #expect(woken.events.map(\.message.id) == [posted.id])
            #expect(woken.events.first?.kind == .created)

            await expectServerError(.invalidVersion, status: 400) {
                try await client.events(of: "ev", EventQuery(since: 999))
            }
            await expectServerError(.invalidIDRange, status: 400) {
                try await client.events(of: "ev", EventQuery(since: 0, minID: 5, maxID: 4))
            }
            await expectServerError(.invalidWait, status: 400) {
                try await client.events(of: "ev", EventQuery(since: 0, wait: .seconds(61)))
            }
            await expectServerError(.invalidLimit, status: 400) {
                try await client.events(of: "ev", EventQuery(since: 0, limit: 1001))
            }
        }
    }
}
