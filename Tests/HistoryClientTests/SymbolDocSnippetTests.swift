import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HistoryAPI
import HistoryClient
import HistoryTestSupport
import Testing

/// The examples in the library's doc comments (the `swift` blocks of its
/// `///` comments, which DocC shows on each symbol's page), line for line:
/// ArticleCodeTests checks they quote nothing else. Those that need no
/// token and end by themselves run against the server; the others
/// (a token's inbox, endless feeds) are compiled only, in `compiledOnly`.
@Suite("The doc comments' code", .timeLimit(.minutes(2)))
struct SymbolDocSnippetTests {
    @Test func aClientPagesAConversationAndReadsOneMessage() async throws {
        try await withRunningServer { server in
            let client = server.client
            _ = try await client.createConversation(id: "general")
            for index in 0..<60 {
                _ = try await client.append(to: "general", sender: "ben", body: "m\(index)", replyTo: nil)
            }
            let page = try await client.page(of: "general")                  // the newest 50
            let older = try await client.page(of: "general", .before(page.oldestID!))
            #expect(page.messages.count == 50 && older.messages.count == 10)

            // A reply whose original is in another conversation: not found in this one.
            _ = try await client.createConversation(id: "other")
            let question = try await client.append(to: "other", sender: "ben", body: "why?").message
            let reply = try await client.append(to: "other", sender: "ana", body: "re", replyTo: question.id).message
            var gone = false
            func showOriginalGone() { gone = true }
            do {
                let original = try await client.message(id: reply.replyTo!, in: "general")
                Issue.record("message \(question.id) is not in general, yet: \(original)")
            } catch let error as HistoryClientError where error.code == .messageNotFound {
                showOriginalGone()
            }
            #expect(gone)
        }
    }

    @Test func theMembersArePagedToTheEnd() async throws {
        try await withRunningServer { server in
            let client = server.client
            _ = try await client.createConversation(id: "general")
            for index in 0..<5 {
                _ = try await client.putMember("user\(index)", in: "general")
            }
            var shown: [String] = []
            func show(_ members: [HistoryMember]) { shown += members.map(\.userID) }
            var after: String? = nil
            repeat {
                let page = try await client.members(of: "general", after: after)
                show(page.members)
                after = page.nextAfter
            } while after != nil
            #expect(shown == (0..<5).map { "user\($0)" })
        }
    }

    @Test func aCannedTransportAnswersWithoutAServer() async throws {
        let url = URL(string: "http://127.0.0.1:9")!
        struct CannedTransport: HistoryTransport {
            func response(for request: URLRequest, isLongPoll: Bool) async throws -> (Data, HTTPURLResponse) {
                let body = Data(#"{"messages":[],"has_older":false,"has_newer":false,"version":0}"#.utf8)
                return (body, HTTPURLResponse(url: request.url!, statusCode: 200, httpVersion: nil, headerFields: nil)!)
            }
        }
        let client = ChatHistoryClient(baseURL: url, transport: CannedTransport())
        let page = try await client.page(of: "general")
        #expect(page.messages.isEmpty && page.version == 0)
    }

    @Test func aWindowOpensAndItsChangesReplay() async throws {
        try await withRunningServer { server in
            let client = server.client
            _ = try await client.createConversation(id: "general")
            for index in 0..<70 {
                _ = try await client.append(to: "general", sender: "ben", body: "m\(index)")
            }
            var window = MessageWindow()
            let request = window.nextRequest(for: .open)!          // newest 50
            let page = try await client.page(of: "general", request.pageRequest)
            let changes = window.apply(page, for: request)         // [.replaced]
            #expect(changes == [.replaced] && window.messages.count == 50)

            try await Self.replay(&window, client)
        }
    }

    private static func replay(_ window: inout MessageWindow, _ client: ChatHistoryClient) async throws {
        let request = try #require(window.nextRequest(for: .scrollUp))
        let page = try await client.page(of: "general", request.pageRequest)
        let before = window.messages
        let changes = window.apply(page, for: request)
        assert(WindowChange.replay(changes, on: before, final: window.messages, id: \.id).map(\.id)
               == window.messages.map(\.id))
        #expect(changes == [.prepended(count: 20, anchorID: before[0].id)])
    }

    @Test func aFeedAndALiveInboxOpen() async throws {
        try await withRunningServer { server in
            let client = server.client
            _ = try await client.createConversation(id: "general")
            _ = try await client.putMember("ana", in: "general")
            for index in 0..<3 {
                _ = try await client.append(to: "general", sender: "ben", body: "m\(index)")
            }
            let feed = ConversationFeed(client: client, conversationID: "general")
            let opened = try await feed.perform(.open)             // [.replaced]
            #expect(opened.changes == [.replaced] && opened.window.messages.count == 3)

            let inbox = LiveInbox(client: client, user: "ana")
            let top = try await inbox.perform(.open)
            #expect(top.changes == [.inserted(conversationID: "general", at: 0)])
        }
    }

    // Compiled, never called: they need a token-mode server's `me`, or
    // follow a feed until cancelled.

    private static func inboxOfMe(client: ChatHistoryClient) async throws {
        func show(_ rows: [HistoryInboxRow]) {}
        let first = try await client.inbox()
        show(first.conversations)
        if let cursor = first.nextCursor {
            let second = try await client.inbox(cursor: cursor)
            _ = second
        }
    }

    private static func inboxFollowed(client: ChatHistoryClient) async throws {
        var inbox = Inbox()
        let request = inbox.nextRequest(for: .open)!              // the top 50
        let page = try await client.inbox(cursor: request.cursor, limit: request.limit)
        let changes = inbox.apply(page, for: request)             // [.inserted(...), ...]
        _ = changes
        for try await batch in client.inboxFeed(since: page.activity).batches {
            let changes = inbox.apply(batch.events, through: batch.activity)
            _ = changes
        }
        for try await batch in client.inboxFeed(since: inbox.activity).batches {
            let changes = inbox.apply(batch.events, through: batch.activity)   // [.moved(...)]
            _ = changes
        }
    }

    private static func tokens(url: URL, account: Account) {
        let client = ChatHistoryClient(baseURL: url, configuration: HistoryClientConfiguration(
            tokenProvider: { try await account.freshHistoryToken() }))
        _ = client
    }

    private static func events(client: ChatHistoryClient, window: inout MessageWindow) async throws {
        let page = try await client.page(of: "general")
        func apply(_ event: HistoryEvent) { _ = window.apply(event) }
        for try await event in client.events(of: "general", since: page.version) {
            let changes = window.apply(event)
            _ = changes
        }
        for try await event in client.events(of: "general", since: page.version) {
            apply(event)
        }
    }

    private static func feedFollowed(client: ChatHistoryClient,
                                     render: @escaping @Sendable (ConversationFeed.Update) async -> Void) async throws {
        let feed = ConversationFeed(client: client, conversationID: "general")
        Task { try await feed.followEvents { update in await render(update) } }
        let older = try await feed.perform(.scrollUp)           // [.prepended(count: 50, anchorID: ...)]
        _ = older
    }

    private static func inboxLive(client: ChatHistoryClient,
                                  render: @escaping @Sendable (LiveInbox.Update) async -> Void) async throws {
        let live = LiveInbox(client: client)
        let opened = try await live.perform(.open)           // the top 50 rows, [.inserted(...)]
        Task { try await live.followChanges { update in await render(update) } }
        let more = try await live.perform(.scrollDown)        // the next page
        _ = (opened, more)
    }

    /// The app's account in the token example.
    struct Account: Sendable {
        func freshHistoryToken() async throws -> String { "" }
    }
}
