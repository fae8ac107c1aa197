import Foundation
import HistoryClient
import HistoryTestSupport
import Testing

/// The code BuildingTheInboxScreen.md quotes, run against the server: the
/// example app's `InboxViewModel` (compiled here through a link to
/// Examples/ChatScreen), a chat opened at the first unread message, and
/// the read marker clearing the badge on the inbox. ArticleCodeTests
/// checks the article quotes nothing else.
@Suite("The inbox article's code", .timeLimit(.minutes(2)))
struct InboxArticleTests {
    static let fast = HistoryClientConfiguration(
        eventWait: .seconds(1), reconnect: ReconnectPolicy(initialDelay: .milliseconds(20), maximumDelay: .milliseconds(200)))

    /// `ana` in `count` conversations, `c0` the oldest activity; each has a message from ben.
    static func seed(_ client: ChatHistoryClient, count: Int) async throws {
        for index in 0..<count {
            _ = try await client.createConversation(id: "c\(index)")
            _ = try await client.putMember("ana", in: "c\(index)")
            _ = try await client.append(to: "c\(index)", sender: "ben", body: "hello \(index)")
        }
    }

    @Test func theViewModelOpensPagesDownAndMovesARowToTheTop() async throws {
        try await withRunningServer(clientConfiguration: Self.fast) { server in
            try await Self.openPageAndMove(server)
        }
    }

    @MainActor private static func openPageAndMove(_ server: RunningServer) async throws {
        let client = server.client
        try await seed(client, count: 5)
        let model = InboxViewModel(client: client, user: "ana", configuration: InboxConfiguration(pageSize: 3))
        let task = Task { await model.opened() }
        defer { task.cancel() }
        #expect(await eventually { model.rows.map(\.id) == ["c4", "c3", "c2"] })
        #expect(model.showsBottomSpinner)

        await model.bottomSpinnerAppeared()
        #expect(model.rows.map(\.id) == ["c4", "c3", "c2", "c1", "c0"])
        #expect(!model.showsBottomSpinner)

        // A message in the last conversation lifts it to the top, live.
        _ = try await client.append(to: "c0", sender: "ben", body: "back on top")
        #expect(await eventually { model.rows.first?.id == "c0" })
        #expect(model.rows.map(\.id) == ["c0", "c4", "c3", "c2", "c1"])
        #expect(model.rows.first?.lastMessage?.body == "back on top")
        #expect(model.rows.first?.read.unreadCount == 2)
        #expect(model.lastError == nil)
    }

    @Test func aTappedRowOpensTheChatAtItsFirstUnreadMessageAndReadingClearsTheBadge() async throws {
        try await withRunningServer(clientConfiguration: Self.fast) { server in
            try await Self.openAtFirstUnread(server)
        }
    }

    @MainActor private static func openAtFirstUnread(_ server: RunningServer) async throws {
        let client = server.client
        _ = try await client.createConversation(id: "team")
        _ = try await client.putMember("ana", in: "team")
        var ids: [Int64] = []
        for index in 0..<30 {
            ids.append(try await client.append(to: "team", sender: "ben", body: "m\(index)").message.id)
        }
        let state = try await client.markRead("team", upTo: ids[9], as: "ana")
        #expect(state.firstUnreadID == ids[10] && state.unreadCount == 20)

        let inbox = InboxViewModel(client: client, user: "ana")
        let task = Task { await inbox.opened() }
        defer { task.cancel() }
        #expect(await eventually { inbox.rows.first?.read.unreadCount == 20 })
        let row = try #require(inbox.rows.first)

        let model = ChatScreenModel(client: client, conversationID: row.id, me: "ana")
        model.readMarkerDelay = .milliseconds(50)
        model.open(atFirstUnread: row.read.firstUnreadID)
        #expect(await eventually { !model.isOpening && model.rows.contains(.unreadDivider) })
        let divider = try #require(model.rows.firstIndex(of: .unreadDivider))
        #expect(model.rows[divider + 1].id == .message(ids[10]))
        #expect(model.scroll.action == .keep(.unreadDivider, top: 0))

        // The reader sees the newest message: the marker moves (debounced),
        // and the inbox feed clears the badge.
        model.viewportDidChange(ChatViewport(
            visibleRows: [.init(id: .message(ids[29]), top: 100)], distanceFromBottom: 0, height: 700))
        #expect(await eventually { inbox.rows.first?.read.unreadCount == 0 })
        model.close()
    }
}
