import Foundation
import HTTPCore
import Testing
@testable import HistoryLoad

/// A tiny server that answers pages of one conversation, `load-0000`, with
/// ids 1...120, and breaks the contract in one way: the tool must notice.
struct BrokenPagesResponder: HTTPResponder {
    enum Fault: String, CaseIterable, CustomTestStringConvertible {
        /// Id 60 never appears, though the conversation counts 120 messages.
        case skipsOneID
        /// `before=X` answers ids below X-1: each page loses the id at its top.
        case offByOneBefore
        var testDescription: String { rawValue }
    }

    let fault: Fault
    static let count: Int64 = 120

    func handle(_ request: HTTPRequest, context: any RequestContext, respond: @escaping @Sendable (HTTPResponse) -> Void) -> HTTPResponderResult {
        let path = request.path
        if path == "/v1/conversations/load-0000" {
            return .response(.json(.ok, Array(#"{"id":"load-0000","title":null,"created_at":"2026-11-21T10:00:00.000Z","message_count":120,"oldest_id":1,"newest_id":120,"version":120}"#.utf8)))
        } else if path == "/v1/conversations/load-0000/messages" {
            return .response(page(query: String(request.query ?? "")))
        } else {
            return .response(.json(.notFound, Array(#"{"error":{"code":"conversation_not_found","message":"no such conversation"}}"#.utf8)))
        }
    }

    func errorResponse(for failure: HTTPFailure) -> HTTPResponse {
        HTTPResponse(status: failure.status, body: Array("\(failure)".utf8))
    }

    private func page(query: String) -> HTTPResponse {
        var parameters: [String: Int64] = [:]
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=")
            if parts.count == 2, let value = Int64(parts[1]) { parameters[String(parts[0])] = value }
        }
        let limit = Int(parameters["limit"] ?? 50)
        let all = (1...Self.count).filter { fault != .skipsOneID || $0 != 60 }
        var selected: [Int64]
        var reset: Bool?
        if let before = parameters["before"] {
            let bound = fault == .offByOneBefore ? before - 1 : before
            selected = Array(all.filter { $0 < bound }.suffix(limit))
        } else if let after = parameters["after"] {
            let above = all.filter { $0 > after }
            if let window = parameters["window"] {
                reset = above.count > window
            }
            selected = reset == true ? Array(all.suffix(limit)) : Array(above.prefix(limit))
        } else {
            selected = Array(all.suffix(limit))
        }
        let hasOlder = selected.first.map { first in all.contains { $0 < first } } ?? false
        let hasNewer = selected.last.map { last in all.contains { $0 > last } } ?? false
        var body = #"{"messages":["#
        body += selected.map { id in
            #"{"id":\#(id),"conversation_id":"load-0000","sender":"ana","body":"message \#(id)","created_at":"2026-11-21T10:00:00.000Z","edited_at":null,"deleted":false,"reply_to":null,"client_id":null,"version":\#(id)}"#
        }.joined(separator: ",")
        body += #"],"has_older":\#(hasOlder),"has_newer":\#(hasNewer),"oldest_id":\#(selected.first.map(String.init) ?? "null"),"newest_id":\#(selected.last.map(String.init) ?? "null"),"version":120"#
        if let reset { body += #","reset":\#(reset)"# }
        body += "}"
        return .json(.ok, Array(body.utf8))
    }
}

@Suite("A server that breaks pages", .serialized)
struct BrokenServerTests {
    @Test(arguments: BrokenPagesResponder.Fault.allCases)
    func theViolationIsReported(_ fault: BrokenPagesResponder.Fault) throws {
        let server = HTTPServer(configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0),
                                responder: BrokenPagesResponder(fault: fault))
        try server.start()
        defer {
            let done = DispatchSemaphore(value: 0)
            server.shutdown(gracePeriod: .seconds(1)) { done.signal() }
            done.wait()
        }
        var plan = quickPlan(ServerEndpoint(host: "127.0.0.1", port: server.port), .scrollback, clients: 2)
        plan.settings.maximumScrollPages = 4
        let report = try LoadRun.execute(plan)
        #expect(report.requests > 0)
        #expect(!report.passed)
        let walk = report.invariants.first { $0.name == Invariant.walkCount.rawValue }
        #expect((walk?.violations ?? 0) > 0, "\(report.text)")
        #expect(walk?.examples.first?.contains("saw 119 ids, message_count is 120") == true
                || fault == .offByOneBefore)
    }

    @Test func aCorrectFakeServerPasses() throws {
        // The same fake without its fault: proves the test above fails for the fault, not the fake.
        struct Correct: HTTPResponder {
            let inner = BrokenPagesResponder(fault: .skipsOneID)
            func handle(_ request: HTTPRequest, context: any RequestContext, respond: @escaping @Sendable (HTTPResponse) -> Void) -> HTTPResponderResult {
                if request.path == "/v1/conversations/load-0000" {
                    return .response(.json(.ok, Array(#"{"id":"load-0000","title":null,"created_at":"2026-11-21T10:00:00.000Z","message_count":119,"oldest_id":1,"newest_id":120,"version":120}"#.utf8)))
                } else {
                    return inner.handle(request, context: context, respond: respond)
                }
            }

            func errorResponse(for failure: HTTPFailure) -> HTTPResponse { inner.errorResponse(for: failure) }
        }
        let server = HTTPServer(configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0), responder: Correct())
        try server.start()
        defer {
            let done = DispatchSemaphore(value: 0)
            server.shutdown(gracePeriod: .seconds(1)) { done.signal() }
            done.wait()
        }
        let report = try LoadRun.execute(quickPlan(ServerEndpoint(host: "127.0.0.1", port: server.port), .scrollback, clients: 2))
        #expect(report.requests > 0)
        #expect(report.passed, "\(report.text)")
        #expect(report.checks["complete walks counted", default: 0] > 0)
    }
}
