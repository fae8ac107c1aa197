import HistoryPostgres
import HistoryStore
import Testing

/// The NOTIFY payloads instances exchange: what one encodes, another reads
/// back exactly, however long the lists.
struct ChangeNoticeTests {
    private let general = ConversationID("general")!

    @Test func aConversationNoticeRoundTrips() {
        let notices: [ChangeNotice] = [
            .conversation(general, version: 42, changedIDs: [3...7, 9...9]),
            .conversation(ConversationID("b-2_x")!, version: 1, changedIDs: nil),
            .inbox(activity: 900, conversations: [1, 5], users: ["ana", "bo.b@x-y_z"]),
            .inbox(activity: 901, conversations: [], users: []),
        ]
        let payloads = ChangeNotice.payloads(notices)
        #expect(payloads.count == 1)
        let decoded = ChangeNotice.decode(payloads[0])
        #expect(decoded.notices == notices)
        #expect(decoded.unreadable == 0)
    }

    @Test func longListsAreSplitAcrossPayloadsUnderTheLimit() {
        let users = (0..<3_000).map { "user-\($0)" }
        let seqs = (1...2_000).map(Int64.init)
        let notices: [ChangeNotice] = [.inbox(activity: 7, conversations: seqs, users: users)]
        let payloads = ChangeNotice.payloads(notices, maximumBytes: 1_000)
        #expect(payloads.count > 10)
        #expect(payloads.allSatisfy { $0.utf8.count <= 1_000 })
        var gotSeqs: [Int64] = []
        var gotUsers: [String] = []
        for payload in payloads {
            for notice in ChangeNotice.decode(payload).notices {
                guard case .inbox(let activity, let conversations, let users) = notice else {
                    Issue.record("unexpected \(notice)")
                    continue
                }
                #expect(activity == 7)
                gotSeqs += conversations
                gotUsers += users
            }
        }
        #expect(gotSeqs == seqs)
        #expect(gotUsers == users)
    }

    @Test func rangesTooLongForAPayloadBecomeUnknownIDs() {
        let ranges: [ClosedRange<Int64>] = (Int64(0)..<2_000).map { (start: Int64) in (start * 3)...(start * 3 + 1) }
        let payloads = ChangeNotice.payloads([.conversation(general, version: 5, changedIDs: ranges)], maximumBytes: 500)
        #expect(ChangeNotice.decode(payloads[0]).notices == [.conversation(general, version: 5, changedIDs: nil)])
    }

    @Test func unreadableLinesAreSkippedAndCounted() {
        let decoded = ChangeNotice.decode("x 1 2\nc 3 general 1-2\nc nope general\ni 4 s=a\nc 9 bad/id")
        #expect(decoded.notices == [.conversation(general, version: 3, changedIDs: [1...2])])
        #expect(decoded.unreadable == 4)
    }
}
