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

/// `ChatHistoryClient` asks for gzip (docs/API.md, "Conditional requests
/// and compression"), and `URLSession` inflates the answer before the
/// client decodes it: on Linux too.
@Suite("ChatHistoryClient and gzip")
struct HistoryClientGzipTests {
    /// URLSession underneath, recording what went out and what came back.
    private final class RecordingTransport: HistoryTransport {
        let inner = URLSessionTransport()
        let exchanges = Mutex<[(sent: String?, coding: String?)]>([])

        func response(for request: URLRequest, isLongPoll: Bool) async throws -> (Data, HTTPURLResponse) {
            let (data, response) = try await inner.response(for: request, isLongPoll: isLongPoll)
            exchanges.withLock {
                $0.append((request.value(forHTTPHeaderField: "Accept-Encoding"),
                           response.value(forHTTPHeaderField: "Content-Encoding")))
            }
            return (data, response)
        }
    }

    @Test(arguments: [true, false])
    func aPageComesGzipAndDecodes(acceptsGzip: Bool) async throws {
        try await withRunningServer { server in
            let transport = RecordingTransport()
            let client = ChatHistoryClient(baseURL: URL(string: server.application.address)!,
                                           configuration: HistoryClientConfiguration(acceptsGzip: acceptsGzip),
                                           transport: transport)
            _ = try await client.createConversation(id: "g")
            for index in 0..<40 {
                _ = try await client.append(to: "g", sender: "ana", body: "message \(index) of a page over a kibibyte")
            }
            let page = try await client.page(of: "g")
            #expect(page.messages.count == 40)
            #expect(page.messages.last?.body == "message 39 of a page over a kibibyte")
            let last = try #require(transport.exchanges.withLock { $0.last })
            #expect(last.sent == (acceptsGzip ? "gzip" : "identity"))
            #expect(last.coding == (acceptsGzip ? "gzip" : nil))
        }
    }
}
