import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HistoryAPI
import HistoryClient
import HistoryTestSupport
import HistoryWiring
import Synchronization
import Testing

/// `ChatHistoryClient` asks again with `If-None-Match` (docs/API.md,
/// "Conditional requests and compression"): a 304 on the wire, the answer
/// it holds returned, and nothing redrawn by the models; a change gives a
/// new tag and the new rows.
@Suite("ChatHistoryClient revalidation", .timeLimit(.minutes(2)))
struct HistoryClientRevalidationTests {
    /// What went over the wire, per request.
    struct Exchange: Sendable {
        var method: String
        var path: String
        var ifNoneMatch: String?
        var status: Int
        var etag: String?
        var bodyBytes: Int
    }

    /// URLSession underneath, recording each exchange.
    final class RecordingTransport: HistoryTransport {
        let inner = URLSessionTransport()
        let exchanges = Mutex<[Exchange]>([])

        func response(for request: URLRequest, isLongPoll: Bool) async throws -> (Data, HTTPURLResponse) {
            let (data, response) = try await inner.response(for: request, isLongPoll: isLongPoll)
            exchanges.withLock {
                $0.append(Exchange(method: request.httpMethod ?? "GET", path: request.url?.path ?? "", ifNoneMatch: request.value(forHTTPHeaderField: "If-None-Match"),
                                   status: response.statusCode, etag: response.value(forHTTPHeaderField: "ETag"),
                                   bodyBytes: data.count))
            }
            return (data, response)
        }

        var last: Exchange? { exchanges.withLock { $0.last } }

        /// The exchanges of GETs of `path` so far.
        func exchanges(of path: String) -> [Exchange] {
            exchanges.withLock { $0.filter { $0.method == "GET" && $0.path == path } }
        }
    }

    static func client(_ server: RunningServer, _ transport: RecordingTransport,
                       revalidates: Bool = true) -> ChatHistoryClient {
        ChatHistoryClient(baseURL: URL(string: server.application.address)!,
                          configuration: HistoryClientConfiguration(revalidates: revalidates), transport: transport)
    }

    static func seed(_ client: ChatHistoryClient, _ id: String, count: Int) async throws {
        _ = try await client.createConversation(id: id)
        for index in 0..<count {
            _ = try await client.append(to: id, sender: "ana", body: "message \(index)")
        }
    }

    @Test func aPageAskedAgainIs304AndTheHeldPageUntilAnEditChangesItsTag() async throws {
        try await withRunningServer { server in
            let transport = RecordingTransport()
            let client = Self.client(server, transport)
            try await Self.seed(client, "r", count: 30)

            let first = try await client.page(of: "r")
            let fresh = try #require(transport.last)
            #expect(fresh.status == 200 && fresh.ifNoneMatch == nil && fresh.bodyBytes > 0)
            let tag = try #require(fresh.etag)

            let again = try await client.page(of: "r")
            let revalidated = try #require(transport.last)
            #expect(revalidated.ifNoneMatch == tag)
            #expect(revalidated.status == 304 && revalidated.bodyBytes == 0)
            #expect(again == first)

            let edited = try await client.edit(messageID: first.messages[3].id, in: "r", body: "changed")
            let changed = try await client.page(of: "r")
            let after = try #require(transport.last)
            #expect(after.ifNoneMatch == tag)
            #expect(after.status == 200 && after.etag != nil && after.etag != tag)
            #expect(changed.messages[3] == edited && changed.version > first.version)
            // The new answer is the one held now.
            _ = try await client.page(of: "r")
            #expect(transport.last?.ifNoneMatch == after.etag && transport.last?.status == 304)
        }
    }

    @Test func theConversationItsMembersOneMessageAndTheInboxRevalidate() async throws {
        try await withRunningServer { server in
            let transport = RecordingTransport()
            let client = Self.client(server, transport)
            try await Self.seed(client, "c", count: 3)
            _ = try await client.putMember("ana", role: .owner, in: "c")
            let messageID = try #require(try await client.page(of: "c").newestID)

            func twice<T: Equatable & Sendable>(_ name: String, _ call: () async throws -> T) async throws {
                let first = try await call()
                #expect(transport.last?.status == 200, "\(name)")
                let second = try await call()
                #expect(transport.last?.status == 304, "\(name)")
                #expect(transport.last?.ifNoneMatch != nil, "\(name)")
                #expect(first == second, "\(name)")
            }
            try await twice("conversation") { try await client.conversation("c") }
            try await twice("members") { try await client.members(of: "c") }
            try await twice("message") { try await client.message(id: messageID, in: "c") }
            try await twice("inbox") { try await client.inbox(of: "ana") }
        }
    }

    @Test func switchedOffNoRequestCarriesATag() async throws {
        try await withRunningServer { server in
            let transport = RecordingTransport()
            let client = Self.client(server, transport, revalidates: false)
            try await Self.seed(client, "off", count: 5)
            let first = try await client.page(of: "off")
            let second = try await client.page(of: "off")
            #expect(first == second)
            let pages = transport.exchanges(of: "/v1/conversations/off/messages")
            #expect(pages.count == 2 && pages.allSatisfy { $0.ifNoneMatch == nil && $0.status == 200 })
        }
    }

    /// At most 64 answers are held: the oldest goes first.
    @Test func theHeldAnswersAreBounded() async throws {
        try await withRunningServer { server in
            let transport = RecordingTransport()
            let client = Self.client(server, transport)
            try await Self.seed(client, "b", count: 70)
            _ = try await client.page(of: "b", .newest(limit: 1))
            for limit in 2...65 {
                _ = try await client.page(of: "b", .newest(limit: limit))
            }
            _ = try await client.page(of: "b", .newest(limit: 65))
            #expect(transport.last?.status == 304)
            _ = try await client.page(of: "b", .newest(limit: 1))
            #expect(transport.last?.ifNoneMatch == nil && transport.last?.status == 200)
        }
    }

    /// A feed opened again on the newest page it holds: 304, no change, the
    /// same window; after an edit, a new tag and the edited row.
    @Test func aConversationFeedReopeningWhatItHoldsChangesNothing() async throws {
        try await withRunningServer { server in
            let transport = RecordingTransport()
            let client = Self.client(server, transport)
            try await Self.seed(client, "f", count: 12)
            let feed = ConversationFeed(client: client, conversationID: "f",
                                        configuration: MessageWindowConfiguration(pageSize: 10))
            let opened = try await feed.perform(.open)
            #expect(opened.changes == [.replaced] && opened.window.messages.count == 10)
            let tag = try #require(transport.last?.etag)

            let again = try await feed.perform(.open)
            #expect(transport.last?.status == 304 && transport.last?.ifNoneMatch == tag)
            #expect(again.changes.isEmpty)
            #expect(again.window == opened.window)

            let target = opened.window.messages[9].id
            _ = try await client.edit(messageID: target, in: "f", body: "edited")
            let reloaded = try await feed.perform(.open)
            #expect(transport.last?.status == 200 && transport.last?.etag != tag)
            #expect(reloaded.changes == [.replaced])
            #expect(reloaded.window.message(withID: target)?.body == "edited")
        }
    }

    /// The screen model opened again (its view's `.task` runs again when
    /// the screen comes back): the newest page is revalidated, its rows
    /// stay, and no scroll command is issued.
    @Test func theChatScreenModelOpenedAgainKeepsItsRowsAndItsScroll() async throws {
        try await withRunningServer { server in
            try await Self.reopenModel(server)
        }
    }

    @MainActor private static func reopenModel(_ server: RunningServer) async throws {
        let transport = RecordingTransport()
        let client = Self.client(server, transport)
        try await Self.seed(client, "m", count: 8)
        let model = ChatScreenModel(client: client, conversationID: "m", me: "ana")
        model.open()
        #expect(await eventually { !model.isOpening && model.rows.count == 8 })
        let rows = model.rows
        let scroll = model.scroll
        let path = "/v1/conversations/m/messages"

        model.open()
        #expect(await eventually { !model.isOpening && transport.exchanges(of: path).count == 2 })
        let second = try #require(transport.exchanges(of: path).last)
        #expect(second.status == 304 && second.ifNoneMatch != nil)
        #expect(model.rows == rows)
        #expect(model.scroll == scroll)
        model.close()
    }

}
