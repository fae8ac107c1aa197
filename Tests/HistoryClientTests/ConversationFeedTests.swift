import Foundation
import HistoryClient
import HistoryTestSupport
import Testing

/// ConversationFeed: MessageWindow's decisions carried out over the real server.
@Suite("ConversationFeed against the server", .timeLimit(.minutes(2)))
struct ConversationFeedTests {
    @Test func opensScrollsUpReturnsToTheBottomAndFollowsNewMessages() async throws {
        let configuration = HistoryClientConfiguration(eventWait: .seconds(2))
        try await withRunningServer(clientConfiguration: configuration) { server in
            let client = server.client
            _ = try await client.createConversation(id: "f")
            var ids: [Int64] = []
            for index in 0..<30 {
                ids.append(try await client.append(to: "f", sender: "ana", body: "m\(index)").message.id)
            }
            let feed = ConversationFeed(client: client, conversationID: "f",
                                        configuration: MessageWindowConfiguration(pageSize: 5, capacity: 10))
            let opened = try await feed.perform(.open)
            #expect(opened.changes == [.replaced])
            #expect(opened.window.messages.map(\.id) == Array(ids.suffix(5)))

            let up = try await feed.perform(.scrollUp)
            #expect(up.changes == [.prepended(count: 5, anchorID: ids[25])])
            let further = try await feed.perform(.scrollUp)
            #expect(further.changes == [.prepended(count: 5, anchorID: ids[20]), .trimmed(edge: .newest, count: 5)])
            #expect(!further.window.attachedToTail)

            let bottom = try await feed.perform(.reachedBottom)
            #expect(bottom.changes == [.replaced])
            #expect(bottom.window.messages.map(\.id) == Array(ids.suffix(5)))
            #expect(bottom.window.attachedToTail)

            let updates = Collector<ConversationFeed.Update>()
            let follower = Task {
                try await feed.followEvents { update in await updates.append(update) }
            }
            let posted = try await client.append(to: "f", sender: "ben", body: "live").message
            let received = await updates.waitFor(count: 1)
            follower.cancel()
            _ = await follower.result
            #expect(received.first?.changes == [.appended(count: 1)])
            #expect(received.first?.window.messages.last == posted)
        }
    }
}
