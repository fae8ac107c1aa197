import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HistoryClient
import HistoryTestSupport
import Testing

/// The feeds over streams and long-polls against a scripted transport:
/// what the client asks (a stream, a long-poll, `Last-Event-ID`, `since`,
/// `typing=1`) and what it makes of the answers (chunks cut anywhere,
/// 429s, resets, typing lists, streams that fail).
@Suite("Live feeds, scripted", .timeLimit(.minutes(5)))
struct LiveFeedTests {
    static let fast = ReconnectPolicy(initialDelay: .milliseconds(5), maximumDelay: .milliseconds(20))

    static func client(_ transport: ScriptedTransport, _ mode: FeedTransport = .automatic,
                       reconnect: ReconnectPolicy = fast) -> ChatHistoryClient {
        ChatHistoryClient(baseURL: URL(string: "http://chat.invalid")!,
                          configuration: HistoryClientConfiguration(eventWait: .seconds(1), reconnect: reconnect,
                                                                    feedTransport: mode),
                          transport: transport)
    }

    static func isFeed(_ request: ScriptedTransport.Request) -> Bool {
        request.path.hasSuffix("/events")
    }

    /// Two events cut across chunks, the stream closed by the server, then
    /// a new stream resuming after the last id: every event once, in order.
    @Test func aStreamResumesWithLastEventID() async throws {
        let opened = Locked(0)
        let transport = ScriptedTransport { request in
            guard request.isStream else { return ScriptedJSON.caughtUp(request) }
            let count = opened.withLock { $0 += 1; return $0 }
            let events = ScriptedJSON.sse(1, version: 1) + ScriptedJSON.sse(2, version: 2)
            if count == 1 {
                let cut = events.index(events.startIndex, offsetBy: 50)
                return .stream(chunks: [String(events[..<cut]), String(events[cut...])], end: .close)
            }
            return .stream(chunks: [": heartbeat\n\n", ScriptedJSON.sse(3, version: 3)], end: .hang)
        }
        let client = Self.client(transport)
        var iterator = client.events(of: "c", since: 0).makeAsyncIterator()
        var versions: [Int64] = []
        for _ in 0..<3 { versions.append(try #require(try await iterator.next()).version) }
        #expect(versions == [1, 2, 3])
        #expect(iterator.version == 3)
        // Each stream opens after a plain request found nothing to catch up on.
        #expect(transport.requests.map(\.isStream) == [false, true, false, true])
        let requests = transport.requests.filter { $0.isStream }
        #expect(requests.count == 2)
        #expect(requests[0].lastEventID == nil && requests[0].query["since"] == "0")
        #expect(requests[1].lastEventID == "2" && requests[1].query["since"] == "2")
    }

    /// A 429 with `Retry-After: 1` on the stream is waited out, not counted
    /// as a failure (one failure would end this feed), and the feed goes on.
    @Test func aStreamWaitsOutA429() async throws {
        let opened = Locked(0)
        let transport = ScriptedTransport { request in
            guard request.isStream else { return ScriptedJSON.caughtUp(request) }
            if opened.withLock({ $0 += 1; return $0 }) == 1 {
                return .json(status: 429, body: #"{"error":{"code":"rate_limited","message":"slow down"}}"#,
                             headers: ["Retry-After": "1"])
            }
            return .stream(chunks: [ScriptedJSON.sse(1, version: 1)], end: .hang)
        }
        let client = Self.client(transport, reconnect: ReconnectPolicy(initialDelay: .milliseconds(5), maximumAttempts: 1))
        let start = ContinuousClock.now
        var iterator = client.events(of: "c", since: 0).makeAsyncIterator()
        #expect(try await iterator.next()?.version == 1)
        #expect(ContinuousClock.now - start >= .seconds(1))
        #expect(transport.requests.filter { $0.isStream }.count == 2)
    }

    /// A server that answers the stream's request with JSON does not
    /// stream: automatic mode uses long-polls from then on.
    @Test func automaticFallsBackWhenTheServerAnswersJSON() async throws {
        let transport = ScriptedTransport { request in
            let since = Int64(request.query["since"] ?? "0") ?? 0
            return .json(status: 200, body: ScriptedJSON.batch([since + 1], version: since + 1))
        }
        let client = Self.client(transport)
        var iterator = client.events(of: "c", since: 0).makeAsyncIterator()
        var versions: [Int64] = []
        for _ in 0..<3 { versions.append(try #require(try await iterator.next()).version) }
        // A catch-up, the stream's request answered with JSON, then long-polls only.
        let requests = transport.requests
        #expect(requests.map(\.isStream).prefix(2) == [false, true])
        #expect(requests.dropFirst(2).allSatisfy { !$0.isStream && $0.query["wait"] != nil })
        // The stream's JSON answer is not taken for events: it is asked again as a long-poll.
        #expect(versions == [1, 2, 3])
    }

    @Test func automaticUsesLongPollsWhenTheTransportCannotStream() async throws {
        let transport = ScriptedTransport(canStream: false) { request in
            let since = Int64(request.query["since"] ?? "0") ?? 0
            return .json(status: 200, body: ScriptedJSON.batch([since + 1], version: since + 1))
        }
        var iterator = Self.client(transport).events(of: "c", since: 0).makeAsyncIterator()
        #expect(try await iterator.next()?.version == 1)
        #expect(try await iterator.next()?.version == 2)
        #expect(transport.requests.allSatisfy { !$0.isStream })
    }

    @Test func streamModeSaysWhenItCannotStream() async throws {
        let transport = ScriptedTransport(canStream: false) { _ in .json(status: 200, body: ScriptedJSON.batch([], version: 0)) }
        var iterator = Self.client(transport, .stream).events(of: "c", since: 0).makeAsyncIterator()
        do {
            _ = try await iterator.next()
            Issue.record("expected streamingUnavailable")
        } catch let error as HistoryClientError {
            guard case .streamingUnavailable = error else { Issue.record("\(error)"); return }
        }
    }

    @Test func longPollModeNeverStreams() async throws {
        let transport = ScriptedTransport { request in
            let since = Int64(request.query["since"] ?? "0") ?? 0
            return request.isStream ? .stream(chunks: [], end: .hang)
                : .json(status: 200, body: ScriptedJSON.batch([since + 1], version: since + 1))
        }
        var iterator = Self.client(transport, .longPoll).events(of: "c", since: 0).makeAsyncIterator()
        #expect(try await iterator.next()?.version == 1)
        #expect(transport.requests.allSatisfy { !$0.isStream })
    }

    /// A stream that fails before saying anything while the long-poll after
    /// it works (a proxy that cuts streams): after three such strikes the
    /// feed keeps to long-polls; nothing is lost meanwhile.
    @Test func streamsThatKeepFailingSilentlyTurnIntoLongPolls() async throws {
        let transport = ScriptedTransport { request in
            if request.isStream { return .stream(chunks: [], end: .fail) }
            let since = Int64(request.query["since"] ?? "0") ?? 0
            return .json(status: 200, body: ScriptedJSON.batch([since + 1], version: since + 1))
        }
        var iterator = Self.client(transport).events(of: "c", since: 0).makeAsyncIterator()
        var versions: [Int64] = []
        for _ in 0..<8 { versions.append(try #require(try await iterator.next()).version) }
        #expect(versions == Array(1...8))
        let kinds = transport.requests.map(\.isStream)
        #expect(kinds.filter { $0 }.count == 3)
        // catch-up, stream (fails), long-poll (answers: a strike), three times; then long-polls.
        #expect(Array(kinds.prefix(9)) == [false, true, false, false, true, false, false, true, false])
        #expect(kinds.dropFirst(9).allSatisfy { !$0 })
    }

    /// A stream cut after it delivered (a phone changing networks) is not
    /// the stream's fault: it is reopened, not replaced by long-polls.
    @Test func aStreamCutAfterDeliveringIsReopened() async throws {
        let opened = Locked(0)
        let transport = ScriptedTransport { request in
            guard request.isStream else { return ScriptedJSON.caughtUp(request) }
            let count = opened.withLock { $0 += 1; return $0 }
            return .stream(chunks: [ScriptedJSON.sse(Int64(count), version: Int64(count))], end: count < 5 ? .fail : .hang)
        }
        var iterator = Self.client(transport).events(of: "c", since: 0).makeAsyncIterator()
        var versions: [Int64] = []
        for _ in 0..<5 { versions.append(try #require(try await iterator.next()).version) }
        #expect(versions == [1, 2, 3, 4, 5])
        let streams = transport.requests.filter { $0.isStream }
        #expect(streams.count == 5)
        #expect(streams.dropFirst().map(\.lastEventID) == ["1", "2", "3", "4"])
    }

    /// `event: reset` is a batch of its own on `batches`, and an error
    /// carrying its version on the one-event-at-a-time sequence.
    @Test func aResetIsABatchOrAnError() async throws {
        let reset = #"{"events":[],"reset":true,"has_more":false,"version":5000}"#
        let transport = ScriptedTransport { request in
            guard request.isStream else { return ScriptedJSON.caughtUp(request) }
            return .stream(chunks: [ScriptedJSON.sse(1, version: 1) + "id: 5000\nevent: reset\ndata: \(reset)\n\n"], end: .hang)
        }
        let client = Self.client(transport)
        var batches = client.events(of: "c", since: 0).batches.makeAsyncIterator()
        let first = try #require(try await batches.next())
        #expect(first.events.map(\.version) == [1] && !first.reset)
        let second = try #require(try await batches.next())
        #expect(second.reset && second.events.isEmpty && second.version == 5000)
        #expect(batches.version == 5000)

        var events = client.events(of: "c", since: 0).makeAsyncIterator()
        #expect(try await events.next()?.version == 1)
        await #expect(throws: HistoryFeedReset(position: 5000)) { try await events.next() }
    }

    /// The same over a long-poll: `{"reset": true}` in place of the events.
    @Test func aLongPollResetIsABatch() async throws {
        let transport = ScriptedTransport(canStream: false) { _ in
            .json(status: 200, body: #"{"events":[],"reset":true,"has_more":false,"version":77}"#)
        }
        var batches = Self.client(transport).events(of: "c", since: 3).batches.makeAsyncIterator()
        let batch = try #require(try await batches.next())
        #expect(batch.reset)
        #expect(batch.version == 77)
    }

    /// Typing lists: a stream's `typing` events, and long-polls asked with
    /// `typing=1` whose lists are handed on only when they change.
    @Test func typingListsArriveWhenTheyChange() async throws {
        let transport = ScriptedTransport { request in
            guard request.isStream else { return ScriptedJSON.caughtUp(request) }
            return .stream(chunks: ["event: typing\ndata: {\"typing\":[\"ben\"]}\n\n"], end: .hang)
        }
        var stream = Self.client(transport).events(of: "c", since: 0, typing: true).batches.makeAsyncIterator()
        #expect(try await stream.next()?.typing == ["ben"])

        let polls = Locked(0)
        let lists = [["ben"], ["ben"], ["ben", "cy"], []]
        let polled = ScriptedTransport(canStream: false) { _ in
            let index = polls.withLock { $0 += 1; return $0 - 1 }
            return .json(status: 200, body: ScriptedJSON.batch([], version: 0, typing: lists[min(index, 3)]))
        }
        var batches = Self.client(polled).events(of: "c", since: 0, typing: true).batches.makeAsyncIterator()
        var seen: [[String]] = []
        for _ in 0..<3 { seen.append(try #require(try await batches.next()?.typing)) }
        #expect(seen == [["ben"], ["ben", "cy"], []])
        #expect(polled.requests.allSatisfy { $0.query["typing"] == "1" })
    }

    /// The inbox feed streams too, and its reset carries `activity`.
    @Test func theInboxFeedStreamsAndResets() async throws {
        let transport = ScriptedTransport { request in
            #expect(request.path == "/v1/users/me/events")
            guard request.isStream else { return ScriptedJSON.caughtUp(request) }
            return .stream(chunks: [#"id: 40\#nevent: reset\#ndata: {"events":[],"reset":true,"has_more":false,"activity":40}\#n\#n"#], end: .hang)
        }
        var batches = Self.client(transport).inboxFeed(since: 2).batches.makeAsyncIterator()
        let batch = try #require(try await batches.next())
        #expect(batch.reset && batch.activity == 40)
        #expect(transport.requests.map(\.isStream) == [false, true])
    }

    /// A stream refused for an expired token is opened again once with a
    /// new token from the provider, as any request is.
    @Test func aStreamRefusedForAnExpiredTokenIsOpenedWithANewOne() async throws {
        let transport = ScriptedTransport { request in
            guard request.isStream else { return ScriptedJSON.caughtUp(request) }
            if request.authorization == "Bearer t2" {
                return .json(status: 401, body: #"{"error":{"code":"token_expired","message":"expired"}}"#)
            }
            return .stream(chunks: [ScriptedJSON.sse(1, version: 1)], end: .hang)
        }
        let issued = Locked(0)
        let client = ChatHistoryClient(
            baseURL: URL(string: "http://chat.invalid")!,
            configuration: HistoryClientConfiguration(reconnect: Self.fast, tokenProvider: {
                "t\(issued.withLock { $0 += 1; return $0 })"
            }),
            transport: transport)
        var iterator = client.events(of: "c", since: 0).makeAsyncIterator()
        #expect(try await iterator.next()?.version == 1)
        let streams = transport.requests.filter { $0.isStream }
        #expect(streams.map(\.authorization) == ["Bearer t2", "Bearer t3"])
    }
}
