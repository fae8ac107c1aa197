import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HistoryAPI
import HistoryClient
import HistoryTestSupport
import HistoryWiring
import Testing

/// What keeps a screen alive on a real network: 429s waited out, a jump to
/// nothing anchored on something, a transport an app can replace.
@Suite("Client robustness", .timeLimit(.minutes(2)))
struct ClientRobustnessTests {
    @Test func retryAfterReadsSecondsAndHTTPDates() {
        #expect(HistoryServerError.parseRetryAfter("3") == .seconds(3))
        #expect(HistoryServerError.parseRetryAfter(nil) == nil)
        #expect(HistoryServerError.parseRetryAfter("soon") == nil)
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        let later = HistoryServerError.parseRetryAfter("Tue, 14 Nov 2023 22:13:25 GMT", now: now)
        #expect(later == .seconds(5))
    }

    @Test func rateLimitedIsTransient() {
        let limited = HistoryClientError.server(HistoryServerError(
            status: 429, code: .rateLimited, message: "slow down", retryAfter: .seconds(1)))
        #expect(limited.isTransient && limited.retryAfter == .seconds(1))
        let parked = HistoryClientError.server(HistoryServerError(status: 429, code: .tooManyRequests, message: "x"))
        #expect(parked.isTransient)
    }

    /// One read a second: every page of the feed after the first is refused
    /// with 429 and `Retry-After: 1`. With `maximumAttempts: 1`, any failure
    /// counted as one would end the stream; the stream waits instead and
    /// delivers every event once.
    @Test func theEventStreamWaitsOutA429() async throws {
        var configuration = RunningServer.defaultConfiguration
        configuration.rateLimitReads = 1
        configuration.rateLimitBurst = 1
        let clientConfiguration = HistoryClientConfiguration(
            eventWait: .seconds(1), reconnect: ReconnectPolicy(initialDelay: .milliseconds(10), maximumAttempts: 1))
        try await withRunningServer(configuration: configuration, clientConfiguration: clientConfiguration) { server in
            let client = server.client
            _ = try await client.createConversation(id: "r")
            for index in 0..<3 {
                _ = try await client.append(to: "r", sender: "ana", body: "m\(index)")
            }
            // Pages until the first 429 (on a busy machine a read can take
            // long enough for the bucket to refill, so not a fixed count).
            var refusals = 0
            do {
                for _ in 0..<50 { _ = try await client.page(of: "r") }
            } catch let error as HistoryClientError where error.code == .rateLimited {
                refusals += 1
                #expect(error.retryAfter != nil && error.isTransient)
            }
            #expect(refusals == 1)
            var versions: [Int64] = []
            for try await event in client.events(of: "r", since: 0, limit: 1) {
                versions.append(event.version)
                if versions.count == 3 { break }
            }
            #expect(versions == [1, 2, 3])
        }
    }

    @Test func aJumpToAMissingIDAnchorsOnTheNearestRow() {
        var harness = WindowHarness(pageSize: 4, messages: 0)
        for _ in 0..<20 { harness.conversation.post(idGap: 2) }   // ids 2, 4, ..., 40
        harness.perform(.open)
        let changes = harness.perform(.jump(to: 11))
        #expect(changes == [.jumped(anchorID: 12)])
        #expect(harness.window.missingJumpTarget == 11)
        #expect(harness.perform(.jump(to: 4)) == [.jumped(anchorID: 4)])
        #expect(harness.window.missingJumpTarget == nil)
    }

    /// An app's tests answer from memory through their own transport.
    @Test func anInjectedTransportCarriesEveryRequest() async throws {
        let transport = RecordingTransport()
        let client = ChatHistoryClient(baseURL: URL(string: "http://chat.invalid")!, transport: transport)
        let page = try await client.page(of: "general")
        #expect(page.messages.isEmpty && page.version == 7)
        #expect(transport.paths == ["/v1/conversations/general/messages"])
    }
}

/// Answers every request with an empty page at version 7 and records the paths.
final class RecordingTransport: HistoryTransport {
    private let recorded = Locked<[String]>([])
    var paths: [String] { recorded.value }

    func response(for request: URLRequest, isLongPoll: Bool) async throws -> (Data, HTTPURLResponse) {
        recorded.withLock { $0.append(request.url?.path ?? "") }
        let body = Data(#"{"messages":[],"has_older":false,"has_newer":false,"version":7}"#.utf8)
        return (body, HTTPURLResponse(url: request.url!, statusCode: 200, httpVersion: nil, headerFields: nil)!)
    }
}
