import HistoryTestSupport
import Foundation
import HistoryClient
import Testing

/// The members calls against a server in open mode, where they keep the
/// same data, unenforced.
@Suite("ChatHistoryClient members", .timeLimit(.minutes(5)))
struct HistoryClientMembersTests {
    @Test func putAddsThenChangesIdempotently() async throws {
        try await withRunningServer { server in
            let client = server.client
            _ = try await client.createConversation(id: "c")
            let added = try await client.putMember("ana", in: "c")
            #expect(added.wasAdded)
            #expect(added.member.userID == "ana" && added.member.role == .member)
            let again = try await client.putMember("ana", in: "c")
            #expect(!again.wasAdded)
            #expect(again.member == added.member)
            let promoted = try await client.putMember("ana", role: .owner, in: "c")
            #expect(!promoted.wasAdded)
            #expect(promoted.member.role == .owner)
            #expect(promoted.member.joinedAt == added.member.joinedAt)
        }
    }

    @Test func pagesInUserIDOrderOnTheKeyset() async throws {
        try await withRunningServer { server in
            let client = server.client
            _ = try await client.createConversation(id: "p")
            let users = ["zoe", "ana", "bob@example.com", "carl.b", "dan_1", "Eve"]
            for user in users {
                _ = try await client.putMember(user, in: "p")
            }
            var seen: [String] = []
            var after: String?
            var pages = 0
            repeat {
                let page = try await client.members(of: "p", after: after, limit: 4)
                #expect(page.members.count <= 4)
                seen += page.members.map(\.userID)
                after = page.nextAfter
                pages += 1
            } while after != nil && pages < 10
            // Byte order: upper case before lower case.
            #expect(seen == users.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
            #expect(pages == 2)
            let all = try await client.members(of: "p")
            #expect(all.members.count == users.count && !all.hasMore)
        }
    }

    @Test func removeSaysWhetherTheUserWasAMember() async throws {
        try await withRunningServer { server in
            let client = server.client
            _ = try await client.createConversation(id: "r")
            _ = try await client.putMember("ana", in: "r")
            #expect(try await client.removeMember("ana", from: "r"))
            #expect(try await client.removeMember("ana", from: "r") == false)
            #expect(try await client.members(of: "r").members.isEmpty)
        }
    }

    @Test func badInputGetsTypedErrors() async throws {
        try await withRunningServer { server in
            let client = server.client
            _ = try await client.createConversation(id: "b")
            await expectServerError(.invalidUserID, status: 400) { try await client.putMember("no spaces", in: "b") }
            await expectServerError(.invalidUserID, status: 400) { try await client.removeMember(String(repeating: "a", count: 65), from: "b") }
            await expectServerError(.invalidLimit, status: 400) { try await client.members(of: "b", limit: 1001) }
            await expectServerError(.conversationNotFound, status: 404) { try await client.putMember("ana", in: "missing") }
            await expectServerError(.conversationNotFound, status: 404) { try await client.members(of: "missing") }
        }
    }

    @Test func anAppendWithoutASenderIsRefusedInOpenMode() async throws {
        try await withRunningServer { server in
            let client = server.client
            _ = try await client.createConversation(id: "o")
            // No token, so no subject to stand in for the sender.
            do {
                _ = try await client.append(to: "o", body: "who?")
                Issue.record("expected an error")
            } catch let error as HistoryClientError {
                #expect(error.status == 400, "\(error)")
            }
        }
    }
}
