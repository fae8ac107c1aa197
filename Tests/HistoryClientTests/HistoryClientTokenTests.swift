import HistoryTestSupport
import Foundation
import HistoryClient
import Testing

/// The token provider against a server in tokens mode: asked before every
/// request, asked once more after 401 `token_expired` with one retry, and
/// the event stream crossing a refresh without a gap or a repeat.
@Suite("ChatHistoryClient tokens", .timeLimit(.minutes(2)))
struct HistoryClientTokenTests {
    static let expired = TokensModeServer.token(subject: "ana", expiresIn: -3600)

    /// A conversation `id` made by the backend with `members` in it.
    static func conversation(_ id: String, members: [String], on server: TokensModeServer) async throws {
        let admin = server.adminClient()
        _ = try await admin.createConversation(id: id)
        for member in members {
            _ = try await admin.putMember(member, in: id)
        }
    }

    @Test func sendsTheProvidersTokenBeforeEveryRequest() async throws {
        try await withTokensModeServer { server in
            try await Self.conversation("t", members: ["ana"], on: server)
            let tokens = ScriptedTokens([TokensModeServer.token(subject: "ana")])
            let client = server.client(provider: tokens.provider)
            _ = try await client.conversation("t")
            _ = try await client.append(to: "t", body: "hello")
            let page = try await client.page(of: "t")
            #expect(page.messages.map(\.body) == ["hello"])
            #expect(tokens.calls == 3)
        }
    }

    @Test func withoutAProviderTheServerAsksForAToken() async throws {
        try await withTokensModeServer { server in
            let client = server.client(provider: nil)
            await expectServerError(.missingToken, status: 401) { try await client.createConversation(id: "x") }
        }
    }

    @Test func refreshesOnceAfterTokenExpiredAndRetries() async throws {
        try await withTokensModeServer { server in
            try await Self.conversation("r", members: ["ana"], on: server)
            let tokens = ScriptedTokens([Self.expired, TokensModeServer.token(subject: "ana")])
            let client = server.client(provider: tokens.provider)
            let result = try await client.append(to: "r", body: "after refresh", clientID: "c-1")
            #expect(result.wasCreated)
            #expect(result.message.sender == "ana")
            #expect(tokens.calls == 2)
            // Stored once: the refused attempt stored nothing.
            #expect(try await server.adminClient().page(of: "r").messages.map(\.body) == ["after refresh"])
        }
    }

    @Test func aSecondTokenExpiredSurfaces() async throws {
        try await withTokensModeServer { server in
            try await Self.conversation("s", members: ["ana"], on: server)
            let tokens = ScriptedTokens([Self.expired])
            let client = server.client(provider: tokens.provider)
            await expectServerError(.tokenExpired, status: 401) { try await client.page(of: "s") }
            #expect(tokens.calls == 2)
        }
    }

    @Test func anInvalidTokenIsNotRetried() async throws {
        try await withTokensModeServer { server in
            let tokens = ScriptedTokens(["not.a.token"])
            let client = server.client(provider: tokens.provider)
            await expectServerError(.invalidToken, status: 401) { try await client.createConversation() }
            #expect(tokens.calls == 1)
        }
    }

    @Test func aFailingProviderSendsNothing() async throws {
        struct SignedOut: Error {}
        try await withTokensModeServer { server in
            let client = server.client { throw SignedOut() }
            do {
                _ = try await client.createConversation(id: "never")
                Issue.record("expected tokenUnavailable")
            } catch let error as HistoryClientError {
                guard case .tokenUnavailable(let cause) = error else {
                    Issue.record("expected tokenUnavailable, got \(error)")
                    return
                }
                #expect(cause is SignedOut)
                #expect(!error.isTransient)
            }
            await expectServerError(.conversationNotFound, status: 404) {
                try await server.adminClient().conversation("never")
            }
        }
    }

    @Test func appendsWithoutASenderAsTheTokensSubject() async throws {
        try await withTokensModeServer { server in
            try await Self.conversation("a", members: ["ana"], on: server)
            let client = server.client { TokensModeServer.token(subject: "ana") }
            #expect(try await client.append(to: "a", body: "mine").message.sender == "ana")
            #expect(try await client.append(to: "a", sender: "ana", body: "named").message.sender == "ana")
            await expectServerError(.senderMismatch, status: 403) {
                try await client.append(to: "a", sender: "bob", body: "forged")
            }
        }
    }

    @Test func accessErrorsAreTyped() async throws {
        try await withTokensModeServer { server in
            try await Self.conversation("m", members: ["ana", "bob"], on: server)
            let ana = server.client { TokensModeServer.token(subject: "ana") }
            let bob = server.client { TokensModeServer.token(subject: "bob") }
            let stranger = server.client { TokensModeServer.token(subject: "eve") }
            let message = try await ana.append(to: "m", body: "ana's").message
            await expectServerError(.notAuthor, status: 403) {
                try await bob.edit(messageID: message.id, in: "m", body: "bob's now")
            }
            await expectServerError(.forbidden, status: 403) { try await bob.putMember("eve", in: "m") }
            await expectServerError(.conversationNotFound, status: 404) { try await stranger.page(of: "m") }
            // Any member may leave.
            #expect(try await bob.removeMember("bob", from: "m"))
            await expectServerError(.conversationNotFound, status: 404) { try await bob.page(of: "m") }
        }
    }

    @Test func theEventStreamResumesAcrossARefresh() async throws {
        try await withTokensModeServer { server in
            try await Self.conversation("e", members: ["ana"], on: server)
            let writer = server.adminClient()
            let tokens = ScriptedTokens([TokensModeServer.token(subject: "ana")])
            // Long-polls: each poll asks for a token (an open stream asks once).
            let reader = server.client(wait: .seconds(1), feedTransport: .longPoll, provider: tokens.provider)
            let collector = Collector<HistoryEvent>()
            let consumer = Task {
                for try await event in reader.events(of: "e", since: 0) {
                    await collector.append(event)
                }
            }
            for index in 0..<3 {
                _ = try await writer.append(to: "e", sender: "bob", body: "before \(index)")
            }
            #expect(await collector.waitFor(count: 3).count == 3)
            // The next poll goes out with an expired token: the stream must
            // refresh and carry on from version 3.
            let callsBefore = tokens.calls
            tokens.script([Self.expired, TokensModeServer.token(subject: "ana")])
            for index in 0..<3 {
                _ = try await writer.append(to: "e", sender: "bob", body: "after \(index)")
            }
            let events = await collector.waitFor(count: 6)
            consumer.cancel()
            #expect(events.map(\.version) == Array(1...6))
            #expect(events.map(\.message.body) == ["before 0", "before 1", "before 2", "after 0", "after 1", "after 2"])
            // The expired token was offered, then a fresh one.
            #expect(tokens.calls >= callsBefore + 2)
        }
    }
}
