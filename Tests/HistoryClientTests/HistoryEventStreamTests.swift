import Foundation
import HistoryClient
import HistoryTestSupport
import Testing

/// The event stream long-polls, follows has_more, survives a server restart
/// without losing or repeating an event, and ends when its task is cancelled.
@Suite("ChatHistoryClient event stream", .timeLimit(.minutes(2)))
struct HistoryEventStreamTests {
    /// Short waits and quick, bounded reconnects, so a restart is crossed fast.
    static let configuration = HistoryClientConfiguration(
        requestTimeout: .seconds(10), longPollMargin: .seconds(5), eventWait: .seconds(2),
        reconnect: ReconnectPolicy(initialDelay: .milliseconds(50), maximumDelay: .milliseconds(500),
                                   maximumAttempts: 200))

    @Test func yieldsEveryChangeOnceInOrderFollowingHasMore() async throws {
        try await withRunningServer(clientConfiguration: Self.configuration) { server in
            let client = server.client
            _ = try await client.createConversation(id: "s")
            for index in 0..<7 {
                _ = try await client.append(to: "s", sender: "ana", body: "m\(index)")
            }
            // limit 2: four answers, three of them with has_more.
            var iterator = client.events(of: "s", since: 0, limit: 2).makeAsyncIterator()
            var versions: [Int64] = []
            for _ in 0..<7 {
                let event = try #require(try await iterator.next())
                versions.append(event.version)
            }
            #expect(versions == Array(1...7))
            #expect(iterator.version == 7)
        }
    }

    /// A long absence comes one server page at a time, never joined into
    /// one array: the consumer holds a page, and may stop after any.
    @Test func batchesYieldEachPageOfAHasMoreChain() async throws {
        try await withRunningServer(clientConfiguration: Self.configuration) { server in
            let client = server.client
            _ = try await client.createConversation(id: "b")
            for index in 0..<5 {
                _ = try await client.append(to: "b", sender: "ana", body: "m\(index)")
            }
            var iterator = client.events(of: "b", since: 0, limit: 2).batches.makeAsyncIterator()
            var pages: [[Int64]] = []
            var last: HistoryEventBatch?
            while last.map({ $0.hasMore }) ?? true {
                let batch = try #require(try await iterator.next())
                pages.append(batch.events.map(\.version))
                last = batch
            }
            #expect(pages == [[1, 2], [3, 4], [5]])
            #expect(last?.version == 5 && iterator.version == 5)
        }
    }

    @Test func survivesAServerRestartWithoutLosingOrRepeatingAnEvent() async throws {
        try await withRunningServer(clientConfiguration: Self.configuration) { server in
            let client = server.client
            _ = try await client.createConversation(id: "r")
            let collector = Collector<HistoryEvent>()
            let consumer = Task {
                for try await event in client.events(of: "r", since: 0) {
                    await collector.append(event)
                }
            }
            var first: HistoryMessage?
            for index in 0..<5 {
                let message = try await client.append(to: "r", sender: "ana", body: "before \(index)").message
                first = first ?? message
            }
            #expect(await collector.waitFor(count: 5).count == 5)

            try await server.restart()
            // Some changes while the stream is reconnecting, some after.
            for index in 0..<5 {
                _ = try await client.append(to: "r", sender: "ana", body: "after \(index)")
            }
            _ = try await client.append(to: "r", sender: "ana", body: "one more")
            // A message the stream delivered before the restart, so its edit is an event of its own.
            _ = try await client.edit(messageID: try #require(first).id, in: "r", body: "edited")

            let events = await collector.waitFor(count: 12)
            consumer.cancel()
            _ = await consumer.result
            #expect(events.map(\.version) == Array(1...12))
            #expect(events.filter { $0.kind == .created }.count == 11)
            #expect(events.last?.kind == .edited && events.last?.message.body == "edited")
            #expect(events.last?.message.id == first?.id)
            #expect(server.restartedOnSamePort != nil)
            #expect(await collector.items.count == 12)
        }
    }

    @Test func aLongPollOutlastsTheOrdinaryRequestTimeout() async throws {
        // A 1 s request timeout, a 3 s wait: the poll's own timeout is wait + margin.
        let configuration = HistoryClientConfiguration(requestTimeout: .seconds(1), longPollMargin: .seconds(5))
        try await withRunningServer(clientConfiguration: configuration) { server in
            // Set up with the default timeout: on a loaded machine an
            // ordinary request may well wait a second for its answer.
            let setup = ChatHistoryClient(baseURL: server.client.baseURL)
            _ = try await setup.createConversation(id: "slow")
            let answer = try await server.client.events(of: "slow", EventQuery(since: 0, wait: .seconds(3)))
            #expect(answer.events.isEmpty && answer.version == 0 && !answer.hasMore)
        }
    }

    @Test func endsWhenTheConsumingTaskIsCancelled() async throws {
        let configuration = HistoryClientConfiguration(eventWait: .seconds(30))
        try await withRunningServer(clientConfiguration: configuration) { server in
            let client = server.client
            _ = try await client.createConversation(id: "x")
            _ = try await client.append(to: "x", sender: "ana", body: "one")
            let received = Collector<HistoryEvent>()
            let consumer = Task { () throws -> Int in
                var count = 0
                for try await event in client.events(of: "x", since: 0) {
                    await received.append(event)
                    count += 1
                }
                return count
            }
            // Once the first event is in, the stream is parked on a 30 s long-poll.
            #expect(await received.waitFor(count: 1).count == 1)
            consumer.cancel()
            #expect(try await consumer.value == 1)
        }
    }

    @Test func throwsWhenTheConversationDoesNotExist() async throws {
        try await withRunningServer(clientConfiguration: Self.configuration) { server in
            var iterator = server.client.events(of: "ghost", since: 0).makeAsyncIterator()
            await expectServerError(.conversationNotFound, status: 404) {
                try await iterator.next()
            }
        }
    }
}
