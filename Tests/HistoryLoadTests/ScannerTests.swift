import Foundation
import Testing
@testable import HistoryLoad

@Suite("Response scanning")
struct ScannerTests {
    static let message = #"{"id":%ID%,"conversation_id":"c","sender":"ana","body":"say \"id\":99, {[\\","created_at":"2026-11-21T10:00:00.123Z","edited_at":null,"deleted":false,"reply_to":3,"client_id":"k-%ID%","version":9}"#

    static func page(_ ids: [Int64], extra: String = "") -> [UInt8] {
        let messages = ids.map { message.replacingOccurrences(of: "%ID%", with: String($0)) }.joined(separator: ",")
        return Array(#"{"messages":[\#(messages)],"has_older":true,"has_newer":false,"oldest_id":\#(ids.first.map(String.init) ?? "null"),"newest_id":\#(ids.last.map(String.init) ?? "null"),"version":42\#(extra)}"#.utf8)
    }

    @Test func pageIdsFlagsAndClientIDs() throws {
        var summary = PageSummary()
        try summary.scan(Self.page([5, 7, 11]), wantClientIDs: true)
        #expect(summary.ids == [5, 7, 11])
        #expect(summary.clientIDs == ["k-5", "k-7", "k-11"])
        #expect(summary.hasOlder && !summary.hasNewer)
        #expect(summary.oldestID == 5 && summary.newestID == 11 && summary.version == 42)
        #expect(summary.anchor == nil && summary.reset == nil)
    }

    @Test func anchorAndResetAndKeysInAnyOrder() throws {
        var summary = PageSummary()
        let body = Array(#" { "version" : 3, "reset": true, "anchor":{"index":1,"found":true,"id":9}, "has_newer":true, "has_older":false, "messages":[{"id":8},{"id":9}] } "#.utf8)
        try summary.scan(body)
        #expect(summary.ids == [8, 9])
        #expect(summary.anchor == PageSummary.Anchor(id: 9, found: true, index: 1))
        #expect(summary.reset == true && summary.version == 3)
    }

    @Test(arguments: [
        #"{"messages":[{"id":1}],"has_older":true,"has_newer":false"#,
        #"{"messages":[{"id":1}],"has_older":true,"has_newer":false,"version":1}x"#,
        #"{"messages":[{"body":"x"}],"has_older":true,"has_newer":false,"version":1}"#,
        #"{"has_older":true,"has_newer":false,"version":1}"#,
        #"{"messages":[{"id":1}],"has_older":tru,"has_newer":false,"version":1}"#,
    ])
    func malformedPagesAreRefused(_ text: String) {
        var summary = PageSummary()
        #expect(throws: ScanError.self) { try summary.scan(Array(text.utf8)) }
    }

    @Test func events() throws {
        var summary = EventsSummary()
        let body = Array(#"{"events":[{"version":4,"type":"created","message":{"id":10,"client_id":"p1-2-999","body":"x"}},{"type":"deleted","version":5,"message":{"id":3,"client_id":null}}],"has_more":false,"version":5}"#.utf8)
        try summary.scan(body)
        #expect(summary.events.count == 2)
        #expect(summary.events[0].type == .created && summary.events[0].messageID == 10 && summary.events[0].clientID == "p1-2-999")
        #expect(summary.events[1].type == .deleted && summary.events[1].clientID == nil)
        #expect(summary.version == 5 && !summary.hasMore)
        #expect(PostUser.dueTime(fromClientID: "p1-2-999") == 999)
        #expect(PostUser.dueTime(fromClientID: "seed-1-x-4") == nil)
    }

    @Test func errorCodeAndIntegers() throws {
        #expect(BodyScan.errorCode(Array(#"{"error":{"code":"invalid_cursor","message":"m"}}"#.utf8)) == "invalid_cursor")
        #expect(BodyScan.errorCode(Array("<html>".utf8)) == nil)
        let values = try BodyScan.integers(Array(#"{"id":"c","message_count":12,"oldest_id":null,"newest_id":40,"version":7}"#.utf8),
                                           ["message_count", "oldest_id", "newest_id", "version"])
        #expect(values == [12, nil, 40, 7])
    }
}
