import Foundation
import HTTPCore
import HistoryAPI
import HistoryTestSupport
import HistoryWiring
import Testing

/// The feeds as Server-Sent Events (docs/API.md, "Live"), over real
/// sockets on the store `HISTORY_TEST_STORE` names: what a stream carries
/// and in which order, how it resumes, and every way it ends.
@Suite("Event streams")
struct EventStreamTests {
    static let conversationTarget = "/v1/conversations/c/events"

    /// A stream on `target`, its head read and checked to be a stream.
    func openStream(_ server: RunningServer, _ target: String, headers: [(String, String)] = [],
                    timeout: Duration = .seconds(20),
                    sourceLocation: SourceLocation = #_sourceLocation) throws -> EventStreamClient {
        let stream = try EventStreamClient(port: server.port, target: target, headers: headers, timeout: timeout)
        let head = try stream.head()
        #expect(head.status == 200, "\(head.body)", sourceLocation: sourceLocation)
        #expect(head.headers["content-type"] == "text/event-stream", sourceLocation: sourceLocation)
        #expect(head.headers["cache-control"] == "no-store", sourceLocation: sourceLocation)
        #expect(head.headers["content-length"] == nil, sourceLocation: sourceLocation)
        return stream
    }

    @Test func aStreamCarriesPostsEditsAndDeletesInVersionOrder() throws {
        try withOpenServer({ _ in }) { server in
            let client = try server.connect()
            defer { client.close() }
            try client.createConversation("c")
            let first = try client.appendMessage("c", body: "first")
            let stream = try openStream(server, Self.conversationTarget + "?since=1")
            let second = try client.appendMessage("c", body: "second")
            #expect(try client.patch("/v1/conversations/c/messages/\(first)", #"{"body":"changed"}"#).status == 200)
            #expect(try client.delete("/v1/conversations/c/messages/\(second)").status == 200)
            let events = try (0..<3).map { _ in try stream.nextEvent() }
            #expect(events.map(\.type) == ["created", "edited", "deleted"])
            #expect(events.map(\.id) == ["2", "3", "4"])
            for event in events {
                let data = event.json
                // `data` is the object the long-poll's events array holds.
                #expect(data["version"] as? Int == Int(event.id ?? ""))
                #expect(data["type"] as? String == event.type)
            }
            #expect((events[0].json["message"] as? [String: Any])?["id"] as? Int == Int(second))
            #expect((events[1].json["message"] as? [String: Any])?["body"] as? String == "changed")
            #expect((events[2].json["message"] as? [String: Any])?["deleted"] as? Bool == true)
            // A long-poll after the same cursor reads the same changes,
            // compacted: the second message once, in its deleted state.
            let polled = try client.get(Self.conversationTarget + "?since=1")
            let polledEvents = try #require(try JSONSerialization.jsonObject(with: Data(polled.body)) as? [String: Any])["events"]
            #expect((polledEvents as? [[String: Any]])?.map { $0["version"] as? Int } == [3, 4])
        }
    }

    @Test func minAndMaxIDKeepAStreamToItsWindow() throws {
        try withOpenServer({ _ in }) { server in
            let client = try server.connect()
            defer { client.close() }
            try client.createConversation("c")
            let watched = try client.appendMessage("c", body: "watched")
            let stream = try openStream(server, Self.conversationTarget + "?since=1&min_id=\(watched)&max_id=\(watched)")
            for _ in 0..<3 { _ = try client.appendMessage("c", body: "outside") }
            #expect(try client.patch("/v1/conversations/c/messages/\(watched)", #"{"body":"changed"}"#).status == 200)
            let event = try stream.nextEvent()
            #expect(event.type == "edited")
            #expect(event.id == "5")
            #expect((event.json["message"] as? [String: Any])?["id"] as? Int == Int(watched))
        }
    }

    @Test func anInboxStreamCarriesTheUsersChanges() throws {
        try withOpenServer({ _ in }) { server in
            let client = try server.connect()
            defer { client.close() }
            try client.makeConversations(["a", "b"], members: ["ana"])
            let since = try client.inboxFeed("ana", since: 0).activity
            let stream = try openStream(server, "/v1/users/ana/events?since=\(since)")
            _ = try client.appendMessage("b")
            #expect(try client.call(.delete, "/v1/conversations/a/members/ana").status == 200)
            let updated = try stream.nextEvent()
            #expect(updated.type == "updated")
            #expect((updated.json["conversation"] as? [String: Any])?["id"] as? String == "b")
            let removed = try stream.nextEvent()
            #expect(removed.type == "removed")
            #expect(removed.json["conversation_id"] as? String == "a")
            #expect(Int64(updated.id ?? "") ?? 0 < Int64(removed.id ?? "") ?? 0)
            #expect(removed.json["activity"] as? Int == Int(removed.id ?? ""))
        }
    }

    /// A client that reads two events, goes away, and comes back with
    /// `Last-Event-ID` to a restarted server on the same database sees
    /// every change once: none lost, none repeated.
    @Test func lastEventIDResumesAcrossARestartWithNothingLostOrRepeated() async throws {
        try await withRunningServer { server in
            try await onOwnThread {
                let client = try server.connect()
                defer { client.close() }
                try client.createConversation("c")
                for index in 1...4 { _ = try client.appendMessage("c", body: "before \(index)") }
            }
            let seenBefore: [EventStreamClient.Event] = try await onOwnThread {
                let stream = try openStream(server, Self.conversationTarget + "?since=0&limit=2")
                defer { stream.close() }
                return try (0..<2).map { _ in try stream.nextEvent() }
            }
            let lastID = try #require(seenBefore.last?.id)
            try await onOwnThread {
                let client = try server.connect()
                defer { client.close() }
                _ = try client.appendMessage("c", body: "while away")
            }
            try await server.restart()
            let seenAfter: [EventStreamClient.Event] = try await onOwnThread {
                let client = try server.connect()
                defer { client.close() }
                _ = try client.appendMessage("c", body: "after restart")
                // An edit of a message the client has seen comes as its own change.
                #expect(try client.patch("/v1/conversations/c/messages/1", #"{"body":"edited"}"#).status == 200)
                let stream = try openStream(server, Self.conversationTarget, headers: [("Last-Event-ID", lastID)])
                defer { stream.close() }
                return try (0..<5).map { _ in try stream.nextEvent() }
            }
            let all = seenBefore + seenAfter
            let versions = all.compactMap { $0.id.flatMap(Int64.init) }
            #expect(versions == Array(1...7), "\(all)")
            #expect(all.map(\.type) == ["created", "created", "created", "created", "created", "created", "edited"])
            let ids = all.compactMap { ($0.json["message"] as? [String: Any])?["id"] as? Int }
            #expect(ids == [1, 2, 3, 4, 5, 6, 1])
        }
    }

    @Test func aRemovedMembersStreamEndsAtOnce() throws {
        try withTokenServer { server, minter in
            let client = try server.connect()
            defer { client.close() }
            let owner = minter.user("olga")
            #expect(try client.createConversation("c", ownedBy: owner) == 201)
            #expect(try client.call(.put, "/v1/conversations/c/members/bob", token: owner, json: "{}").status == 201)
            let stream = try openStream(server, Self.conversationTarget + "?since=0",
                                        headers: [("Authorization", "Bearer \(minter.user("bob"))")])
            #expect(try client.call(.post, "/v1/conversations/c/messages", token: owner,
                                    json: #"{"body":"hi"}"#).status == 201)
            #expect(try stream.nextEvent().type == "created")
            #expect(try client.call(.delete, "/v1/conversations/c/members/bob", token: owner).status == 200)
            #expect(stream.isClosed(within: .seconds(10)))
            #expect(eventually { server.application.parkedLongPollCount == 0 })
            // Nothing written after the removal reaches the removed member.
            #expect(try client.call(.post, "/v1/conversations/c/messages", token: owner,
                                    json: #"{"body":"secret"}"#).status == 201)
        }
    }

    @Test func aStreamEndsByItselfAfterItsMaximumDuration() throws {
        try withOpenServer({ $0.maximumStreamDuration = .seconds(1) }) { server in
            let client = try server.connect()
            defer { client.close() }
            try client.createConversation("c")
            let opened = ContinuousClock.now
            let stream = try openStream(server, Self.conversationTarget + "?since=0")
            #expect(stream.isClosed(within: .seconds(20)))
            #expect(ContinuousClock.now - opened >= .milliseconds(900))
            #expect(eventually { server.application.parkedLongPollCount == 0 })
        }
    }

    /// Shutdown ends streams at once (their clients resume elsewhere with
    /// `Last-Event-ID`); the grace period, long here, is not waited out.
    @Test func aDrainingServerEndsItsStreams() throws {
        try withTemporaryDirectory { directory in
            var configuration = RunningServer.defaultConfiguration
            configuration.databasePath = try serverDatabase(in: directory.url)
            let application = try HistoryApplication(configuration: configuration)
            try application.start()
            let client = try HTTPClientConnection(port: application.port)
            try client.createConversation("c")
            client.close()
            let stream = try EventStreamClient(port: application.port, target: Self.conversationTarget + "?since=0")
            #expect(try stream.head().status == 200)
            #expect(eventually { application.parkedLongPollCount == 1 })
            let stopped = DispatchSemaphore(value: 0)
            application.shutdown(gracePeriod: .seconds(120)) { stopped.signal() }
            #expect(stream.isClosed(within: .seconds(20)))
            #expect(stopped.wait(timeout: .now() + 60) == .success)
        }
    }

    @Test func aQuietStreamSendsHeartbeatComments() throws {
        try withOpenServer({ $0.streamHeartbeatInterval = .milliseconds(200) }) { server in
            let client = try server.connect()
            defer { client.close() }
            try client.createConversation("c")
            let stream = try openStream(server, Self.conversationTarget + "?since=0")
            #expect(try stream.next().isComment)
            #expect(try stream.next().isComment)
            // And events still follow.
            _ = try client.appendMessage("c")
            #expect(try stream.nextEvent().id == "1")
        }
    }

    /// A client that never reads while changes pile up is cut off by the
    /// write timeout: the server holds one piece for it, never the backlog.
    @Test func aStreamThatIsNotReadIsClosed() throws {
        try withOpenServer({ $0.writeTimeout = .seconds(1) }) { server in
            let client = try server.connect()
            defer { client.close() }
            try client.createConversation("c")
            let stalled = try EventStreamClient(port: server.port, target: Self.conversationTarget + "?since=0",
                                                receiveBuffer: 4096)
            #expect(eventually { server.application.parkedLongPollCount == 1 })
            let body = String(repeating: "x", count: 16_000)
            // Well past what the kernel's socket buffers hold (4 MiB sent, a few KiB received).
            for _ in 0..<600 {
                _ = try client.appendMessage("c", body: body)
                if server.application.parkedLongPollCount == 0 { break }
            }
            #expect(eventually { server.application.parkedLongPollCount == 0 })
            #expect(stalled.isClosed(within: .seconds(30)))
            // Everyone else is served as before.
            #expect(try client.get(Self.conversationTarget + "?since=0&limit=1").status == 200)
        }
    }

    @Test func streamsCountAsParkedPollsPerClient() throws {
        try withOpenServer({ $0.maximumParkedPollsPerClient = 2 }) { server in
            let client = try server.connect()
            defer { client.close() }
            try client.createConversation("c")
            let streams = try (0..<2).map { _ in try openStream(server, Self.conversationTarget + "?since=0") }
            #expect(eventually { server.application.parkedLongPollCount == 2 })
            let refused = try EventStreamClient(port: server.port, target: Self.conversationTarget + "?since=0")
            let head = try refused.head()
            #expect(head.status == 429)
            #expect(head.body.contains("too_many_requests"), "\(head.body)")
            expectError(try client.get(Self.conversationTarget + "?since=0&wait=30"), 429, "too_many_requests")
            // A stream that ends frees its place.
            streams[0].close()
            #expect(eventually { server.application.parkedLongPollCount == 1 })
            let again = try openStream(server, Self.conversationTarget + "?since=0")
            defer { again.close() }
            #expect(eventually { server.application.parkedLongPollCount == 2 })
        }
    }

    @Test func aBadLastEventIDIsInvalidVersion() throws {
        try withOpenServer({ _ in }) { server in
            let client = try server.connect()
            defer { client.close() }
            try client.createConversation("c")
            _ = try client.appendMessage("c")
            for bad in ["abc", "-1", "1.5", "99999999999999999999", "5"] {
                let stream = try EventStreamClient(port: server.port, target: Self.conversationTarget,
                                                   headers: [("Last-Event-ID", bad)])
                let head = try stream.head()
                #expect(head.status == 400, "\(bad): \(head.body)")
                #expect(head.body.contains(#""code":"invalid_version""#), "\(bad): \(head.body)")
            }
            let inbox = try EventStreamClient(port: server.port, target: "/v1/users/ana/events",
                                              headers: [("Last-Event-ID", "x")])
            let head = try inbox.head()
            #expect(head.status == 400)
            #expect(head.body.contains(#""code":"invalid_version""#), "\(head.body)")
        }
    }

    /// HEAD gets the head and an ended body; an HTTP/1.0 client a stream
    /// that closes its connection at the end like any other.
    @Test func headAndHTTP10() throws {
        try withOpenServer({ $0.maximumStreamDuration = .seconds(3) }) { server in
            let client = try server.connect()
            defer { client.close() }
            try client.createConversation("c")
            let head = try EventStreamClient(port: server.port, target: Self.conversationTarget + "?since=0", method: "HEAD")
            #expect(try head.head().status == 200)
            #expect(head.isClosed(within: .seconds(10)))
            let old = try EventStreamClient(port: server.port, target: Self.conversationTarget + "?since=0",
                                            headers: [("Connection", "keep-alive")], version: "HTTP/1.0")
            let oldHead = try old.head()
            #expect(oldHead.status == 200)
            #expect(oldHead.headers["connection"] == "close")
            _ = try client.appendMessage("c")
            #expect(try old.nextEvent().id == "1")
            #expect(old.isClosed(within: .seconds(10)))
        }
    }

    // MARK: - Reset

    @Test func pastTheThresholdAConversationFeedAnswersReset() throws {
        try withOpenServer({ $0.feedResetAfter = 5 }) { server in
            let client = try server.connect()
            defer { client.close() }
            try client.createConversation("c")
            for _ in 0..<8 { _ = try client.appendMessage("c") }
            // Long-poll: more than 5 changes after 0, none paged.
            let reset = try client.get(Self.conversationTarget + "?since=0&limit=2&wait=5")
            #expect(reset.status == 200)
            #expect(reset.bodyText == #"{"events":[],"reset":true,"has_more":false,"version":8}"#)
            // Exactly 5 after 3: the changes themselves.
            let paged = try client.get(Self.conversationTarget + "?since=3")
            #expect(paged.bodyText.contains(#""has_more":false,"version":8"#))
            #expect(!paged.bodyText.contains("reset"))
            // The asked range counts, not the conversation: 2 messages in it.
            let ranged = try client.get(Self.conversationTarget + "?since=0&min_id=2&max_id=3")
            #expect(!ranged.bodyText.contains("reset"), "\(ranged.bodyText)")
            #expect(ranged.bodyText.contains(#""version":2"#) && ranged.bodyText.contains(#""version":3"#))
            // A stream: one reset event at the current version, then it goes on from there.
            let stream = try openStream(server, Self.conversationTarget + "?since=0")
            let event = try stream.nextEvent()
            #expect(event.type == "reset")
            #expect(event.id == "8")
            #expect(event.data == #"{"events":[],"reset":true,"has_more":false,"version":8}"#)
            _ = try client.appendMessage("c")
            let next = try stream.nextEvent()
            #expect(next.type == "created")
            #expect(next.id == "9")
        }
    }

    @Test func pastTheThresholdAUserFeedAnswersReset() throws {
        try withOpenServer({ $0.feedResetAfter = 3 }) { server in
            let client = try server.connect()
            defer { client.close() }
            try client.makeConversations(["a", "b", "c", "d"], members: ["ana"])
            let feed = try client.call(.get, "/v1/users/ana/events?since=0")
            #expect(feed.status == 200)
            let body = try #require(try JSONSerialization.jsonObject(with: Data(feed.body)) as? [String: Any])
            #expect(body["reset"] as? Bool == true)
            #expect((body["events"] as? [Any])?.isEmpty == true)
            #expect(body["has_more"] as? Bool == false)
            let activity = try #require(body["activity"] as? Int)
            // One conversation changed after the activity before the last: no reset.
            let one = try client.call(.get, "/v1/users/ana/events?since=\(activity - 1)").bodyText
            #expect(!one.contains("reset"), "\(one)")
            let stream = try openStream(server, "/v1/users/ana/events?since=0")
            let event = try stream.nextEvent()
            #expect(event.type == "reset")
            #expect(event.id == String(activity))
            #expect(event.json["activity"] as? Int == activity)
            _ = try client.appendMessage("b")
            #expect(try stream.nextEvent().type == "updated")
        }
    }
}
