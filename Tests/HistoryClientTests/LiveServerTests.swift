import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HistoryAPI
import HistoryClient
import HistoryStore
import HistoryTestSupport
import HistoryWiring
import Testing

/// The client's live calls against the real server in-process, over
/// loopback: streams across a restart, resets, typing between two users,
/// one message, jump by time.
@Suite("Live against the server", .timeLimit(.minutes(5)))
struct LiveServerTests {
    static func configuration(_ transport: FeedTransport) -> HistoryClientConfiguration {
        HistoryClientConfiguration(
            eventWait: .seconds(1), reconnect: ReconnectPolicy(initialDelay: .milliseconds(20), maximumDelay: .milliseconds(300)),
            feedTransport: transport)
    }

    @MainActor static func messageIDs(_ model: ChatScreenModel) -> [Int64] {
        model.rows.compactMap { if case .message(let message) = $0 { message.id } else { nil } }
    }

    // MARK: - Streams (live-streams)

    /// `.stream` only: the feed cannot fall back, so every event came over
    /// Server-Sent Events, the ones after the restart through a reconnect
    /// with `Last-Event-ID`. Every change once, in order.
    @Test func aStreamLosesAndRepeatsNothingAcrossAServerRestart() async throws {
        try await withRunningServer(clientConfiguration: Self.configuration(.stream)) { server in
            let client = server.client
            _ = try await client.createConversation(id: "s")
            let collector = Collector<HistoryEvent>()
            let consumer = Task {
                for try await event in client.events(of: "s", since: 0) {
                    await collector.append(event)
                }
            }
            var first: HistoryMessage?
            for index in 0..<3 {
                let message = try await client.append(to: "s", sender: "ana", body: "before \(index)").message
                first = first ?? message
            }
            #expect(await collector.waitFor(count: 3).count == 3)
            try await server.restart()
            for index in 0..<3 {
                _ = try await client.append(to: "s", sender: "ana", body: "after \(index)")
            }
            _ = try await client.edit(messageID: try #require(first).id, in: "s", body: "edited")
            let events = await collector.waitFor(count: 7)
            consumer.cancel()
            _ = await consumer.result
            #expect(events.map(\.version) == Array(1...7))
            #expect(events.last?.kind == .edited && events.last?.message.body == "edited")
            #expect(await collector.items.count == 7)
        }
    }

    /// More changes after `since` than `--feed-reset-after`: the answer
    /// is a reset at the current version, over streams and long-polls alike.
    @Test(arguments: [FeedTransport.stream, .longPoll])
    func aFeedFarBehindGetsAReset(transport: FeedTransport) async throws {
        var configuration = RunningServer.defaultConfiguration
        configuration.feedResetAfter = 5
        try await withRunningServer(configuration: configuration, clientConfiguration: Self.configuration(transport)) { server in
            let client = server.client
            _ = try await client.createConversation(id: "far")
            for index in 0..<10 {
                _ = try await client.append(to: "far", sender: "ben", body: "m\(index)")
            }
            var batches = client.events(of: "far", since: 0).batches.makeAsyncIterator()
            let batch = try #require(try await batches.next())
            #expect(batch.reset && batch.events.isEmpty && batch.version == 10)
            var events = client.events(of: "far", since: 2).makeAsyncIterator()
            await #expect(throws: HistoryFeedReset(position: 10)) { try await events.next() }
            // Within the threshold, the changes themselves.
            var near = client.events(of: "far", since: 6).batches.makeAsyncIterator()
            let changes = try #require(try await near.next())
            #expect(!changes.reset && changes.events.map(\.version) == [7, 8, 9, 10])
        }
    }

    /// Back after more changes than the server replays (fewer than the
    /// window's capacity, so only the reset explains it): the rows are the
    /// newest page, and the feed goes on from there.
    @Test func theScreenModelReopensAfterAServerReset() async throws {
        var configuration = RunningServer.defaultConfiguration
        configuration.feedResetAfter = 5
        try await withRunningServer(configuration: configuration, clientConfiguration: Self.configuration(.automatic)) { server in
            try await Self.reopensAfterReset(server)
        }
    }

    @MainActor private static func reopensAfterReset(_ server: RunningServer) async throws {
        let client = server.client
        _ = try await client.createConversation(id: "away")
        for index in 0..<3 {
            _ = try await client.append(to: "away", sender: "ben", body: "old \(index)")
        }
        let model = ChatScreenModel(client: client, conversationID: "away",
                                    configuration: MessageWindowConfiguration(pageSize: 4, capacity: 100), me: "ana")
        model.open()
        #expect(await eventually { model.isFollowing && Self.messageIDs(model).count == 3 })
        model.suspend()
        var ids: [Int64] = []
        for index in 0..<20 {
            ids.append(try await client.append(to: "away", sender: "ben", body: "new \(index)").message.id)
        }
        model.resume()
        #expect(await eventually { Self.messageIDs(model) == Array(ids.suffix(4)) })
        let last = try await client.append(to: "away", sender: "ben", body: "live").message.id
        #expect(await eventually { Self.messageIDs(model).last == last })
        #expect(model.lastError == nil)
        model.close()
    }

    // MARK: - One message and jump by time (live-reads)

    @Test func oneMessageTombstonesIncluded() async throws {
        try await withRunningServer { server in
            let client = server.client
            _ = try await client.createConversation(id: "one")
            let kept = try await client.append(to: "one", sender: "ana", body: "hello").message
            let gone = try await client.append(to: "one", sender: "ana", body: "secret").message
            _ = try await client.delete(messageID: gone.id, in: "one")
            #expect(try await client.message(id: kept.id, in: "one") == kept)
            let tombstone = try await client.message(id: gone.id, in: "one")
            #expect(tombstone.deleted && tombstone.body.isEmpty && tombstone.id == gone.id)
            await expectServerError(.messageNotFound, status: 404) {
                try await client.message(id: gone.id + 1000, in: "one")
            }
        }
    }

    @Test func jumpByTimeFindsTheFirstMessageAtThatTime() async throws {
        try await withRunningServer { server in
            let client = server.client
            _ = try await client.createConversation(id: "days")
            var messages: [HistoryMessage] = []
            for index in 0..<30 {
                messages.append(try await client.append(to: "days", sender: "ben", body: "m\(index)").message)
                // Distinct milliseconds, so "the first at or after" names one message.
                try await Task.sleep(for: .milliseconds(3))
            }
            let target = messages[12]
            let page = try await client.page(of: "days", aroundTime: target.createdAt, limit: 10)
            #expect(page.anchor?.found == true && page.anchor?.id == target.id)
            #expect(page.anchor?.index.map { page.messages[$0].id } == target.id)
            #expect(page.messages.count == 10)
            let late = try await client.page(of: "days", aroundTime: messages[29].createdAt.addingTimeInterval(60), limit: 5)
            #expect(late.anchor?.found == false && late.messages.last?.id == messages[29].id && !late.hasNewer)
            try await Self.jumpToDate(client, target: target)
        }
    }

    @MainActor private static func jumpToDate(_ client: ChatHistoryClient, target: HistoryMessage) async throws {
        let model = ChatScreenModel(client: client, conversationID: "days",
                                    configuration: MessageWindowConfiguration(pageSize: 6), me: "ana")
        model.open()
        #expect(await eventually { Self.messageIDs(model).count == 6 })
        model.jump(toDate: target.createdAt)
        #expect(await eventually { Self.messageIDs(model).contains(target.id) })
        #expect(model.scroll.action == .keep(.message(target.id), top: 0))
        #expect(model.showsJumpToLatest)
        model.close()
    }

    // MARK: - Typing (live-typing)

    /// Ana types: Ben's screen shows her (never himself, though he types
    /// too), over a stream and over long-polls; she stops (the client
    /// holds her `false` until the server's 2 s are over) and the row goes.
    @Test(arguments: [FeedTransport.stream, .longPoll])
    func typingReachesTheOtherMembersScreen(transport: FeedTransport) async throws {
        try await withTokensModeServer { server in
            // A `true` that lasts an hour, not the contract's 6 s, so that a
            // screen model starved of its actor for seconds (as in a CI run
            // holding the cooperative pool's two threads) still sees it, and
            // only the `false` can take the row away: the client never sends
            // it inside the server's quiet period, where it would be dropped.
            try await Self.typingConversation(on: server)
            func client(_ user: String) -> ChatHistoryClient {
                var configuration = Self.configuration(transport)
                configuration.tokenProvider = { TokensModeServer.token(subject: user) }
                return ChatHistoryClient(baseURL: server.baseURL, configuration: configuration)
            }
            try await Self.typing(ana: client("ana"), ben: client("ben"))
        }
    }

    /// Conversation `t` with members ana and ben, on a server where a
    /// `true` lasts an hour.
    private static func typingConversation(on server: TokensModeServer) async throws {
        try #require((server.app.store as? StoreFront)?.typingBoard).use(TypingTiming(lasts: .seconds(3600)))
        let admin = server.adminClient()
        _ = try await admin.createConversation(id: "t")
        _ = try await admin.putMember("ana", in: "t")
        _ = try await admin.putMember("ben", in: "t")
    }

    @MainActor private static func typing(ana: ChatHistoryClient, ben: ChatHistoryClient) async throws {
        _ = try await ana.append(to: "t", body: "hi")
        let model = ChatScreenModel(client: ben, conversationID: "t", me: "ben")
        model.open()
        #expect(await eventually { model.isFollowing && Self.messageIDs(model).count == 1 })
        model.setTyping(true)
        let beforeTrue = ContinuousClock.now
        #expect(try await ana.setTyping(true, in: "t"))
        #expect(await eventually { model.typingUsers == ["ana"] })
        #expect(model.rows.last == .typing(["ana"]))
        #expect(try await ana.setTyping(false, in: "t"))
        // Sent once the server's 2 s quiet period after the true was over.
        #expect(ContinuousClock.now - beforeTrue >= .seconds(2))
        #expect(await eventually { model.typingUsers.isEmpty })
        #expect(model.rows.last.map { if case .message = $0 { true } else { false } } == true)
        model.close()
    }

    /// Ana's `true` reaches the server 3 s after she sent it (a slow
    /// uplink), so the server's quiet period starts 3 s after the send.
    /// Her `false`, made once Ben sees her typing, waits 2 s from that
    /// answer and is accepted: Ben's row goes, though a `true` lasts an
    /// hour on this server. (Counted from the send, the 2 s were over and
    /// the `false` went at once, inside the quiet period: dropped.)
    @Test func aFalseAfterASlowTrueReachesTheOtherMember() async throws {
        try await withTokensModeServer { server in
            try await Self.typingConversation(on: server)
            func configuration(_ user: String) -> HistoryClientConfiguration {
                var configuration = Self.configuration(.automatic)
                configuration.tokenProvider = { TokensModeServer.token(subject: user) }
                return configuration
            }
            let ana = ChatHistoryClient(baseURL: server.baseURL, configuration: configuration("ana"),
                                        transport: SlowTrueTransport(delay: .seconds(3)))
            let ben = ChatHistoryClient(baseURL: server.baseURL, configuration: configuration("ben"))
            try await Self.stopAfterASlowTrue(ana: ana, ben: ben)
        }
    }

    @MainActor private static func stopAfterASlowTrue(ana: ChatHistoryClient, ben: ChatHistoryClient) async throws {
        _ = try await ana.append(to: "t", body: "hi")
        let model = ChatScreenModel(client: ben, conversationID: "t", me: "ben")
        model.open()
        #expect(await eventually { model.isFollowing && Self.messageIDs(model).count == 1 })
        let beforeTrue = ContinuousClock.now
        #expect(try await ana.setTyping(true, in: "t"))
        #expect(await eventually { model.typingUsers == ["ana"] })
        #expect(try await ana.setTyping(false, in: "t"))
        // The 3 s on the way, then the 2 s after the answer.
        #expect(ContinuousClock.now - beforeTrue >= .seconds(5))
        #expect(await eventually { model.typingUsers.isEmpty && model.rows.last.map {
            if case .message = $0 { true } else { false } } == true })
        model.close()
    }
}

/// The default transport, but a typing `true` reaches the server only
/// `delay` after the client handed it over: a slow uplink, a busy proxy.
private final class SlowTrueTransport: HistoryTransport {
    let inner = URLSessionTransport()
    let delay: Duration

    init(delay: Duration) {
        self.delay = delay
    }

    func response(for request: URLRequest, isLongPoll: Bool) async throws -> (Data, HTTPURLResponse) {
        if request.httpMethod == "PUT", String(decoding: request.httpBody ?? Data(), as: UTF8.self) == #"{"typing":true}"# {
            try await Task.sleep(for: delay)
        }
        return try await inner.response(for: request, isLongPoll: isLongPoll)
    }
}
