import HistoryTestSupport
import Foundation
import HTTPCore
import HistoryAPI
import HistoryStore
import Testing

/// Each rule of the contract lives once, in the model (`MessageRules`,
/// `PageQuery.check()`, `ChangeQuery.check()`): the HTTP layer and the
/// store report a broken one with the same code and the same sentence.
@Suite("One place per rule")
struct RuleTests {
    private static let brokenPages: [PageQuery] = [
        PageQuery(limit: 0), PageQuery(limit: 201), PageQuery(cursor: .before(-1)),
        PageQuery(cursor: .between(after: 5, before: -5)), PageQuery(cursor: .around(5), window: 5),
        PageQuery(cursor: .after(5), window: 10_001),
    ]

    private static let brokenFeeds: [ChangeQuery] = [
        ChangeQuery(since: -1), ChangeQuery(since: 0, limit: 1001), ChangeQuery(since: 0, minID: 0),
        ChangeQuery(since: 0, minID: 9, maxID: 8),
    ]

    private static let brokenMessages: [NewMessage] = [
        NewMessage(sender: "", body: "b"), NewMessage(sender: "s", body: ""),
        NewMessage(sender: "s", body: "b", clientID: String(repeating: "k", count: 129)),
        NewMessage(sender: "s", body: "b", replyTo: 0),
    ]

    private func violation(_ rule: () throws(RuleViolation) -> Void) -> RuleViolation? {
        do {
            try rule()
            return nil
        } catch {
            return error
        }
    }

    @Test func theStoresReportIsTheHTTPLayersAnswer() throws {
        var violations: [RuleViolation] = []
        for query in Self.brokenPages {
            violations.append(try #require(violation { () throws(RuleViolation) in try query.check() }, "\(query)"))
        }
        for query in Self.brokenFeeds {
            violations.append(try #require(violation { () throws(RuleViolation) in try query.check() }, "\(query)"))
        }
        for message in Self.brokenMessages {
            violations.append(try #require(violation { () throws(RuleViolation) in try MessageRules.check(message) }, "\(message)"))
        }
        for violation in violations {
            let fromStore = APIError(StoreError(violation))
            #expect(fromStore == APIError(violation), "\(violation)")
            #expect(fromStore.code == ErrorCode(invalid: violation.field))
            #expect(fromStore.message == violation.message)
        }
    }

    /// Text that is no number and a number out of range break the same rule
    /// in the same words.
    @Test func aRuleHasOneSentenceOverHTTP() throws {
        try withRunningServer { client in
            try client.createConversation("c")
            for (query, expected) in [
                ("?limit=500", "limit must be an integer from 1 to 200, not '500'"),
                ("?limit=abc", "limit must be an integer from 1 to 200, not 'abc'"),
                ("?before=-1", "before must be a message id or position, an integer from 0 to \(Int64.max), not '-1'"),
                ("?before=3&window=5", "window is only allowed beside a lone after"),
            ] {
                let response = try client.get("/v1/conversations/c/messages\(query)")
                #expect(response.status == 400)
                #expect(try errorMessage(response) == expected, "\(query)")
            }
            let feed = try client.get("/v1/conversations/c/events?min_id=9&max_id=8")
            expectError(feed, 400, "invalid_id_range")
            #expect(try errorMessage(feed) == "min_id must not be greater than max_id (8), not '9'")
        }
    }

    /// The contract's error body, decoded.
    private struct ErrorBody: Decodable {
        struct Detail: Decodable {
            var code: String
            var message: String
        }
        var error: Detail
    }

    private func errorMessage(_ response: HTTPClientResponse) throws -> String {
        try JSONDecoder().decode(ErrorBody.self, from: Data(response.body)).error.message
    }
}
