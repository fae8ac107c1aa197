import HistoryPostgres
import HistoryStore
import Testing

/// Typing calls as NOTIFY lines (`t 1|0 CONVERSATION USER ORIGIN`): read
/// back exactly, many to a payload, and malformed ones skipped.
struct TypingNoticeTests {
    @Test func typingNoticesRoundTripBesideOthers() {
        let room = ConversationID("room")!
        let notices: [ChangeNotice] = [
            .typing(TypingChange(conversation: room, user: UserID("ana")!, typing: true), origin: "k3x9"),
            .conversation(room, version: 3, changedIDs: nil),
            .typing(TypingChange(conversation: room, user: UserID("bo.b@x-y_z")!, typing: false), origin: "zz1"),
        ]
        let payloads = ChangeNotice.payloads(notices)
        #expect(payloads.count == 1)
        #expect(payloads[0].hasPrefix("t 1 room ana k3x9\n"))
        let decoded = ChangeNotice.decode(payloads[0])
        #expect(decoded.notices == notices)
        #expect(decoded.unreadable == 0)
    }

    @Test func aThousandTypersFitInAFewPayloads() {
        let notices = (0..<1_000).map { index in
            ChangeNotice.typing(TypingChange(conversation: ConversationID("load-\(index % 16)")!,
                                             user: UserID("load-user-\(index)")!, typing: true), origin: "abc")
        }
        let payloads = ChangeNotice.payloads(notices)
        #expect(payloads.count <= 5)
        #expect(payloads.flatMap { ChangeNotice.decode($0).notices } == notices)
    }

    @Test func malformedTypingLinesAreSkipped() {
        let decoded = ChangeNotice.decode("t 2 room ana o\nt 1 room ana\nt 1 room a%na o\nt 1 bad! ana o\nt 0 room ana o")
        #expect(decoded.unreadable == 4)
        #expect(decoded.notices == [.typing(TypingChange(conversation: ConversationID("room")!, user: UserID("ana")!,
                                                         typing: false), origin: "o")])
    }
}
