import Dispatch
import Foundation
import HTTPCore
@testable import HistoryAPI
import HistoryStore
import HistoryWiring
import HistoryTestSupport
import Synchronization
import Testing

/// 304s decided on the event loop from the SQLite store's kept versions
/// and roles (`KeptVersions`, `Router.Shortcut`): never behind a commit
/// already answered, never to a removed member, and answered while every
/// read-pool thread is held. The contract checks run on PostgreSQL too
/// (`HISTORY_TEST_STORE=postgres`), where every conditional request is read.
@Suite("API: 304s from kept versions")
struct KeptVersionTests {
    /// The one read-pool thread is held by a gated page read of `slow`:
    /// a conditional request naming `fast`'s kept version is still
    /// answered 304 (page and conversation), while one that does not
    /// match waits for the pool like any read.
    @Test func aMatchingTagIsAnswered304WhileThePoolIsHeld() throws {
        try withGatedServer(readThreads: 1, keepsVersions: true) { store, port, _ in
            let client = try HTTPClientConnection(port: port)
            defer { client.close() }
            let page = try client.get("/v1/conversations/fast/messages?limit=10")
            let pageTag = try #require(page.headers["ETag"])
            let conversation = try client.get("/v1/conversations/fast")
            let conversationTag = try #require(conversation.headers["ETag"])

            let held = try HTTPClientConnection(port: port)
            defer { held.close() }
            try held.send(HTTPRequest(method: .get, target: "/v1/conversations/slow/messages"))
            #expect(eventually { store.enteredCount == 1 })

            let cached = try client.call(.get, "/v1/conversations/fast/messages?limit=10",
                                         headers: [("If-None-Match", pageTag)])
            #expect(cached.status == 304)
            #expect(cached.headers["ETag"] == pageTag)
            #expect(cached.headers.values(of: "Vary").contains("Accept-Encoding"))
            let cachedConversation = try client.call(.get, "/v1/conversations/fast",
                                                     headers: [("If-None-Match", conversationTag)])
            #expect(cachedConversation.status == 304)
            #expect(cachedConversation.headers["ETag"] == conversationTag)
            let head = try client.call(.head, "/v1/conversations/fast/messages?limit=10",
                                       headers: [("If-None-Match", pageTag)])
            #expect(head.status == 304)

            // Another query's tag does not match: it is read, after the held read.
            let other = try HTTPClientConnection(port: port)
            defer { other.close() }
            try other.send(HTTPRequest(method: .get, target: "/v1/conversations/fast/messages?limit=9",
                                       headers: ["If-None-Match": pageTag]))
            store.open()
            #expect(try held.receive().status == 200)
            let read = try other.receive()
            #expect(read.status == 200)
            #expect(read.bodyText.contains("in fast"))
        }
    }

    /// A bad query is never answered 304 from memory: the read path names
    /// the problem, as without kept versions.
    @Test func aBadQueryIsStillItsError() throws {
        try withGatedServer(readThreads: 1, keepsVersions: true) { _, port, _ in
            let client = try HTTPClientConnection(port: port)
            defer { client.close() }
            let answer = try client.call(.get, "/v1/conversations/fast/messages?limit=0",
                                         headers: [("If-None-Match", "*")])
            expectError(answer, 400, "invalid_limit")
            let missing = try client.call(.get, "/v1/conversations/nowhere/messages", headers: [("If-None-Match", "*")])
            expectError(missing, 404, "conversation_not_found")
        }
    }

    /// Appends, edits and deletes from four connections while four others
    /// revalidate the newest page and the conversation: every 304 and
    /// every tag carries a version at least that of every write answered
    /// before its request was sent (the tag's number is the conversation's
    /// version). A version kept after its commit was answered would fail.
    @Test func no304IsBehindAnAnsweredWrite() throws {
        try withRunningServer { server in
            let setup = try server.connect()
            defer { setup.close() }
            try setup.createConversation("c")
            _ = try setup.appendMessage("c")
            let answered = Atomic<Int64>(0)
            let revalidations = Atomic<Int>(0)
            let notModified = Atomic<Int>(0)
            let failures = Mutex<[String]>([])
            let writing = Atomic<Int>(4)

            let (finished, errors) = runClientThreads(server, count: 8) { index, client in
                if index < 4 {
                    defer { writing.subtract(1, ordering: .sequentiallyConsistent) }
                    try write(client, answered: answered, turns: 60)
                    return
                }
                let target = index % 2 == 0 ? "/v1/conversations/c/messages?limit=20" : "/v1/conversations/c"
                var tag = "\"none\""
                // Bounded: at most 5,000 requests, and only while writers write.
                for _ in 0..<5_000 where writing.load(ordering: .sequentiallyConsistent) > 0 {
                    let floor = answered.load(ordering: .sequentiallyConsistent)
                    let answer = try client.call(.get, target, headers: [("If-None-Match", tag)])
                    revalidations.add(1, ordering: .relaxed)
                    if answer.status == 304 { notModified.add(1, ordering: .relaxed) }
                    guard answer.status == 200 || answer.status == 304,
                          let current = answer.headers["ETag"], let version = Self.version(inTag: current) else {
                        failures.withLock { $0.append("\(target): \(answer.status) \(answer.bodyText)") }
                        return
                    }
                    if version < floor {
                        failures.withLock { $0.append("\(target): \(answer.status) at version \(version) after \(floor) was answered") }
                    }
                    tag = current
                }
            }
            #expect(finished)
            #expect(errors.isEmpty, "\(errors.prefix(5))")
            #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0.prefix(5) })")
            #expect(revalidations.load(ordering: .relaxed) > 0)
            // The test means something only if some answers were 304s.
            #expect(notModified.load(ordering: .relaxed) > 0)
        }
    }

    /// A member's conditional request is decided from its kept role on
    /// the loop; once its removal is answered, the next one is 404, and a
    /// stranger's is never a 304.
    @Test func aRemovedMembersNextRequestIsRefused() throws {
        try withTokenServer { server, minter in
            let client = try server.connect()
            defer { client.close() }
            let ana = minter.user("ana"), bob = minter.user("bob")
            #expect(try client.createConversation("t", ownedBy: ana) == 201)
            for round in 0..<5 {
                #expect(try client.call(.put, "/v1/conversations/t/members/bob", token: ana, json: "{}").status == 201)
                if round == 0 {
                    #expect(try client.call(.post, "/v1/conversations/t/messages", token: ana, json: #"{"body":"x"}"#).status == 201)
                }
                let page = try client.call(.get, "/v1/conversations/t/messages", token: bob)
                let tag = try #require(page.headers["ETag"])
                // The first is read (and keeps bob's role), the next ones are decided from it.
                for _ in 0..<3 {
                    let cached = try client.call(.get, "/v1/conversations/t/messages", token: bob, headers: [("If-None-Match", tag)])
                    #expect(cached.status == 304)
                }
                // Kept on SQLite only (PostgreSQL reads every conditional request).
                let kept = server.application.store.knownRole(of: UserID("bob")!, in: ConversationID("t")!)
                #expect(kept == (StoreBackend.serversUseSQLite ? .member : nil))
                let conversation = try client.call(.get, "/v1/conversations/t", token: bob)
                let conversationTag = try #require(conversation.headers["ETag"])
                #expect(try client.call(.get, "/v1/conversations/t", token: bob,
                                        headers: [("If-None-Match", conversationTag)]).status == 304)

                #expect(try client.call(.delete, "/v1/conversations/t/members/bob", token: ana).status == 200)
                expectError(try client.call(.get, "/v1/conversations/t/messages", token: bob, headers: [("If-None-Match", tag)]),
                            404, "conversation_not_found")
                expectError(try client.call(.get, "/v1/conversations/t", token: bob,
                                            headers: [("If-None-Match", conversationTag)]),
                            404, "conversation_not_found")
                expectError(try client.call(.get, "/v1/conversations/t/messages", token: minter.user("eve"),
                                            headers: [("If-None-Match", tag)]), 404, "conversation_not_found")
            }
        }
    }

    /// One thread removes and re-adds bob while bob revalidates: a request
    /// sent and answered while bob was out, with no membership change sent
    /// meanwhile, is never a 304.
    @Test func noUserIsAnswered304WhileRemoved() throws {
        try withTokenServer({ $0.rateLimitReads = 0; $0.rateLimitWrites = 0 }) { server, minter in
            let ana = minter.user("ana"), bob = minter.user("bob")
            let setup = try server.connect()
            defer { setup.close() }
            #expect(try setup.createConversation("t", ownedBy: ana) == 201)
            #expect(try setup.call(.post, "/v1/conversations/t/messages", token: ana, json: #"{"body":"x"}"#).status == 201)
            #expect(try setup.call(.put, "/v1/conversations/t/members/bob", token: ana, json: "{}").status == 201)
            let tag = try #require(try setup.call(.get, "/v1/conversations/t/messages", token: bob).headers["ETag"])
            // (changes sent, changes answered, bob a member after the last answered)
            let membership = Mutex((sent: 0, answered: 0, member: true))
            let toggling = Atomic<Bool>(true)
            let failures = Mutex<[String]>([])
            let refusedWhileOut = Atomic<Int>(0)
            let notModified = Atomic<Int>(0)
            let finished = DispatchGroup()
            finished.enter()
            Thread.detachNewThread {
                defer { finished.leave(); toggling.store(false, ordering: .sequentiallyConsistent) }
                do {
                    let owner = try server.connect()
                    defer { owner.close() }
                    for _ in 0..<40 {
                        membership.withLock { $0.sent += 1 }
                        let removed = try owner.call(.delete, "/v1/conversations/t/members/bob", token: ana)
                        membership.withLock { $0 = ($0.sent, $0.answered + 1, false) }
                        // Out for a while, so the reader asks meanwhile: a
                        // whole request of the reader must fit in it, which
                        // on a loaded machine takes well over 5 ms.
                        Thread.sleep(forTimeInterval: 0.025)
                        membership.withLock { $0.sent += 1 }
                        let added = try owner.call(.put, "/v1/conversations/t/members/bob", token: ana, json: "{}")
                        membership.withLock { $0 = ($0.sent, $0.answered + 1, true) }
                        if removed.status != 200 || added.status != 201 {
                            failures.withLock { $0.append("toggle: \(removed.status) \(added.status)") }
                        }
                    }
                } catch {
                    failures.withLock { $0.append("toggle: \(error)") }
                }
            }
            finished.enter()
            Thread.detachNewThread {
                defer { finished.leave() }
                do {
                    let reader = try server.connect()
                    defer { reader.close() }
                    for _ in 0..<20_000 where toggling.load(ordering: .sequentiallyConsistent) {
                        let before = membership.withLock { $0 }
                        let answer = try reader.call(.get, "/v1/conversations/t/messages", token: bob,
                                                     headers: [("If-None-Match", tag)])
                        let after = membership.withLock { $0 }
                        if answer.status == 304 { notModified.add(1, ordering: .relaxed) }
                        guard before.sent == before.answered, after.sent == before.sent, !before.member else { continue }
                        if answer.status == 404 {
                            refusedWhileOut.add(1, ordering: .relaxed)
                        } else {
                            failures.withLock { $0.append("\(answer.status) while bob was out (change \(before.sent))") }
                        }
                    }
                } catch {
                    failures.withLock { $0.append("reader: \(error)") }
                }
            }
            #expect(finished.wait(timeout: .now() + 120) == .success)
            #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0.prefix(5) })")
            // Meaningful only if both sides were seen.
            #expect(notModified.load(ordering: .relaxed) > 0)
            #expect(refusedWhileOut.load(ordering: .relaxed) > 0)
        }
    }

    /// `turns` writes: an append, then every third turn an edit and every
    /// fifth a delete of it; `answered` keeps the highest version answered.
    private func write(_ client: HTTPClientConnection, answered: borrowing Atomic<Int64>, turns: Int) throws {
        for turn in 0..<turns {
            let posted = try client.post("/v1/conversations/c/messages", #"{"sender":"ana","body":"turn \#(turn)"}"#)
            try record(posted, 201, answered)
            let id = try #require(Self.field("id", in: posted.bodyText))
            if turn % 3 == 0 {
                try record(try client.patch("/v1/conversations/c/messages/\(id)", #"{"body":"edited \#(turn)"}"#), 200, answered)
            }
            if turn % 5 == 0 {
                try record(try client.delete("/v1/conversations/c/messages/\(id)"), 200, answered)
            }
        }
    }

    private func record(_ answer: HTTPClientResponse, _ status: Int, _ answered: borrowing Atomic<Int64>) throws {
        #expect(answer.status == status, "\(answer.bodyText)")
        answered.raise(to: try #require(Self.field("version", in: answer.bodyText)))
    }

    /// The integer after `"name":` in a message's JSON.
    private static func field(_ name: String, in json: String) -> Int64? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any] else { return nil }
        return (object[name] as? NSNumber)?.int64Value
    }

    /// `"m42-0123456789abcdef"` → 42 (a page's or a conversation's tag).
    private static func version(inTag tag: String) -> Int64? {
        let body = tag.dropFirst()
        guard let dash = body.firstIndex(of: "-") else { return nil }
        return Int64(body[body.index(after: body.startIndex)..<dash])
    }
}
