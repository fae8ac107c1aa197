import Foundation
import HTTPCore
import HistoryAPI
import HistoryClient
import HistoryTestSupport
import HistoryWiring
import Testing

/// The three ways a call fails, each its own case: the contract's error,
/// no answer, an answer that is not the contract's.
@Suite("ChatHistoryClient errors")
struct HistoryClientErrorTests {
    /// Answers every request with a fixed response: a proxy's HTML page, or a
    /// body that is not what the contract promises.
    struct FixedResponder: HTTPResponder {
        let response: HTTPResponse

        func handle(_ request: HTTPRequest, context: any RequestContext,
                    respond: @escaping @Sendable (HTTPResponse) -> Void) -> HTTPResponderResult {
            .response(response)
        }

        func errorResponse(for failure: HTTPFailure) -> HTTPResponse {
            APIError(failure).response(route: nil)
        }
    }

    private func withFixedServer(_ response: HTTPResponse, _ body: (ChatHistoryClient) async throws -> Void)
        async throws {
        let server = HTTPServer(configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0),
                                responder: FixedResponder(response: response))
        try server.start()
        let client = ChatHistoryClient(baseURL: URL(string: "http://127.0.0.1:\(server.port)")!)
        do {
            try await body(client)
        } catch {
            await stop(server)
            throw error
        }
        await stop(server)
    }

    private func stop(_ server: HTTPServer) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            server.shutdown(gracePeriod: .seconds(1)) { continuation.resume() }
        }
    }

    @Test func aNonContractErrorBodyIsUndecodableWithItsStatus() async throws {
        let html = HTTPResponse(status: HTTPStatus(code: 502, reason: "Bad Gateway"),
                                headers: ["Content-Type": "text/html"], body: Array("<html>oops</html>".utf8))
        try await withFixedServer(html) { client in
            do {
                _ = try await client.health()
                Issue.record("expected a failure")
            } catch let error as HistoryClientError {
                guard case .undecodableResponse(let status, _) = error else {
                    Issue.record("expected undecodableResponse, got \(error)")
                    return
                }
                #expect(status == 502)
                #expect(error.code == nil)
                #expect(error.isTransient)
            }
        }
    }

    @Test func aSuccessBodyOfTheWrongShapeIsUndecodable() async throws {
        try await withFixedServer(.json(.ok, Array(#"{"messages": "not a list"}"#.utf8))) { client in
            do {
                _ = try await client.page(of: "any")
                Issue.record("expected a failure")
            } catch let error as HistoryClientError {
                guard case .undecodableResponse(let status, let reason) = error else {
                    Issue.record("expected undecodableResponse, got \(error)")
                    return
                }
                #expect(status == 200)
                #expect(reason.contains("HistoryPage"))
                #expect(!error.isTransient)
            }
        }
    }

    @Test func aContractErrorCarriesCodeMessageAndStatus() async throws {
        let answer = HTTPResponse.error(HTTPStatus(code: 503, reason: "Service Unavailable"),
                                        code: "store_unavailable", message: "the store does not answer")
        try await withFixedServer(answer) { client in
            do {
                _ = try await client.health()
                Issue.record("expected a failure")
            } catch let error as HistoryClientError {
                guard case .server(let serverError) = error else {
                    Issue.record("expected server, got \(error)")
                    return
                }
                #expect(serverError == HistoryServerError(status: 503, code: .storeUnavailable,
                                                          message: "the store does not answer"))
                #expect(error.isTransient)
            }
        }
    }

    @Test func aFullDiskIsTransient() async throws {
        let answer = HTTPResponse.error(HTTPStatus(code: 507, reason: "Insufficient Storage"),
                                        code: "insufficient_storage", message: "the server's storage is full")
        try await withFixedServer(answer) { client in
            do {
                _ = try await client.health()
                Issue.record("expected a failure")
            } catch let error as HistoryClientError {
                #expect(error.code == .insufficientStorage)
                #expect(error.status == 507)
                #expect(error.isTransient)
            }
        }
    }

    @Test func noServerIsATransportError() async throws {
        // Bind a port, then free it: nothing listens there any more.
        let server = HTTPServer(configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0),
                                responder: FixedResponder(response: .json(.ok, Array("{}".utf8))))
        try server.start()
        let port = server.port
        await stop(server)
        let client = ChatHistoryClient(baseURL: URL(string: "http://127.0.0.1:\(port)")!,
                                   configuration: HistoryClientConfiguration(requestTimeout: .seconds(5)))
        do {
            _ = try await client.health()
            Issue.record("expected a failure")
        } catch let error as HistoryClientError {
            guard case .transport = error else {
                Issue.record("expected transport, got \(error)")
                return
            }
            #expect(error.status == nil && error.code == nil)
            #expect(error.isTransient)
        }
    }

    @Test func aBaseURLPathPrefixIsKept() async throws {
        try await withRunningServer { server in
            // The server has no /prefix routes: its 404 proves the prefix was sent.
            let prefixed = ChatHistoryClient(baseURL: URL(string: server.application.address + "/prefix/")!)
            await expectServerError(.notFound, status: 404) {
                try await prefixed.health()
            }
        }
    }
}
