import Foundation
import HTTPCore
import HistoryTestSupport
import Synchronization
import Testing
@testable import HistoryAPI

/// A connection that never closes: the router only needs somewhere to hang `onClose`.
private struct OpenContext: RequestContext {
    var remoteAddress: String { "127.0.0.1:1" }
    func onClose(_ handler: @escaping @Sendable () -> Void) {}
}

@Suite("Router")
struct RouterTests {
    /// Routes one request through a router whose handlers echo their route and parameters.
    private func route(_ method: HTTPMethod, _ target: String) -> HTTPResponse {
        var router = Router()
        let echo: Router.Handler = { request in
            let parameters = request.pathParameters.map { $0 ?? "<nil>" }.joined(separator: "|")
            return request.json(.ok, Array(parameters.utf8))
        }
        router.add(.get, "/healthz", handler: echo)
        router.add(.post, "/v1/conversations", handler: echo)
        router.add(.get, "/v1/conversations/{cid}", handler: echo)
        router.add(.get, "/v1/conversations/{cid}/messages", handler: echo)
        router.add(.post, "/v1/conversations/{cid}/messages", handler: echo)
        router.add(.patch, "/v1/conversations/{cid}/messages/{id}", handler: echo)
        router.add(.delete, "/v1/conversations/{cid}/messages/{id}", handler: echo)
        router.add(.get, "/boom") { _ throws(APIError) in throw APIError(.invalidLimit, "nope") }
        let answer = Mutex<HTTPResponse?>(nil)
        router.handle(HTTPRequest(method: method, target: target), context: OpenContext()) { response in
            answer.withLock { $0 = response }
        }
        return answer.withLock { $0 }!
    }

    /// `error.code` of the contract's error body, nil when the body is not one.
    private func errorCode(_ response: HTTPResponse) -> String? {
        (try? JSONDecoder().decode(ContractErrorBody.self, from: Data(response.body)))?.error.code
    }

    @Test func matchesPatternsAndDecodesSegments() {
        let response = route(.get, "/v1/conversations/gen%65ral/messages?limit=5")
        #expect(response.status == .ok)
        #expect(String(decoding: response.body, as: UTF8.self) == "general")
        #expect(response.route == "GET /v1/conversations/{cid}/messages")

        let edit = route(.patch, "/v1/conversations/a/messages/42")
        #expect(String(decoding: edit.body, as: UTF8.self) == "a|42")
        #expect(edit.route == "PATCH /v1/conversations/{cid}/messages/{id}")
    }

    @Test func malformedPercentInAParameterIsHandedOverAsNil() {
        let response = route(.get, "/v1/conversations/%zz")
        #expect(String(decoding: response.body, as: UTF8.self) == "<nil>")
    }

    @Test(arguments: ["/nope", "/", "/v1/conversations/", "//healthz", "/healthz/", "/v1/conversations/a/b",
                      "/v1/conversations//messages", "/HEALTHZ", "*", "/v1/conversations/a/messages/1/x"])
    func unknownPathsAreNotFound(_ target: String) {
        let response = route(.get, target)
        #expect(response.status == .notFound)
        #expect(errorCode(response) == "not_found")
        #expect(response.route == Router.unmatchedRoute)
    }

    @Test func otherMethodOnAKnownPathIsMethodNotAllowedWithAllow() {
        let response = route(.delete, "/v1/conversations/a/messages")
        #expect(response.status == .methodNotAllowed)
        #expect(errorCode(response) == "method_not_allowed")
        #expect(response.headers["Allow"] == "GET, HEAD, POST")

        let item = route(HTTPMethod(rawValue: "BREW"), "/v1/conversations/a/messages/1")
        #expect(item.status == .methodNotAllowed)
        #expect(item.headers["Allow"] == "PATCH, DELETE")

        #expect(route(.post, "/healthz").headers["Allow"] == "GET, HEAD")
    }

    @Test func headRunsTheGetRoute() {
        let response = route(.head, "/v1/conversations/abc")
        #expect(response.status == .ok)
        #expect(String(decoding: response.body, as: UTF8.self) == "abc")
        #expect(response.route == "GET /v1/conversations/{cid}")
        #expect(route(.head, "/v1/conversations").status == .methodNotAllowed)
    }

    @Test func thrownAPIErrorsBecomeTheirResponse() {
        let response = route(.get, "/boom")
        #expect(response.status == .badRequest)
        #expect(errorCode(response) == "invalid_limit")
        #expect(response.route == "GET /boom")
    }

    /// The parser reduces an absolute-form target to its path (RFC 9112
    /// §3.2.2), once: the router matches what it hands over.
    @Test func absoluteFormTargetsRouteByTheirPath() throws {
        for (line, status) in [("GET http://localhost:8080/healthz HTTP/1.1", HTTPStatus.ok),
                               ("GET HTTP://example.com HTTP/1.1", .notFound)] {
            var parser = RequestParser(limits: HTTPLimits())
            parser.append(Array("\(line)\r\nHost: localhost\r\n\r\n".utf8))
            guard case .complete(let head) = try parser.next() else {
                Issue.record("\(line) did not parse whole")
                continue
            }
            #expect(route(.get, head.request.target).status == status)
        }
    }
}
