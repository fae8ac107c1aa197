import Foundation
import HistoryClient
import HistoryStore
import Testing
@testable import HistoryAPI

/// `JSONWriter.page` and `.changeFeed` under a byte budget, on pages built
/// by hand: each trim keeps the right side, stays within the budget, and
/// describes exactly the messages it wrote.
@Suite("Budgeted page writer")
struct BudgetedPageWriterTests {
    static let conversation = ConversationID("general")!
    /// About 6 KB of JSON per message: 1000 escaped control characters.
    static let body = String(repeating: "\u{08}", count: 1000)

    func messages(_ ids: ClosedRange<Int64>) -> [Message] {
        ids.map { id in
            Message(id: id, conversationID: Self.conversation, sender: "ana", body: Self.body,
                    createdAt: Timestamp(millisecondsSinceEpoch: 1_795_255_200_123), editedAt: nil, deleted: false,
                    replyTo: nil, clientID: nil, version: id)
        }
    }

    func decode(_ bytes: [UInt8]) throws -> HistoryPage {
        try HistoryJSON.makeDecoder().decode(HistoryPage.self, from: Data(bytes))
    }

    @Test func eachTrimKeepsItsSideWithinTheBudget() throws {
        let page = Page(rows: MessageRows(messages(1...50), conversationID: Self.conversation),
                        hasOlder: false, hasNewer: false, version: 50)
        let budget = 40_000
        let newest = try decode(JSONWriter.page(page, budget: budget, trim: .keepNewest))
        #expect(newest.messages.last?.id == 50 && newest.hasOlder && !newest.hasNewer)
        #expect(newest.oldestID == newest.messages.first?.id)
        let oldest = try decode(JSONWriter.page(page, budget: budget, trim: .keepOldest))
        #expect(oldest.messages.first?.id == 1 && oldest.hasNewer && !oldest.hasOlder)
        #expect(oldest.messages.count == newest.messages.count, "equal messages, equal room")
        for trim in [PageTrim.keepNewest, .keepOldest] {
            #expect(JSONWriter.page(page, budget: budget, trim: trim).count <= budget)
        }
        // Without a budget nothing changes.
        #expect(try decode(JSONWriter.page(page)).messages.count == 50)
    }

    @Test func anAroundPageWithAMissingAnchorSplitsAtItsID() throws {
        var rows = messages(1...20) + messages(22...41)
        rows.sort { $0.id < $1.id }
        let page = Page(rows: MessageRows(rows, conversationID: Self.conversation), hasOlder: false, hasNewer: false,
                        version: 41, anchor: Page.Anchor(id: 21, found: false, index: nil))
        let written = JSONWriter.page(page, budget: 40_000, trim: .keepAnchor)
        #expect(written.count <= 40_000)
        let decoded = try decode(written)
        let ids = decoded.messages.map(\.id)
        #expect(ids.contains(20) && ids.contains(22), "both sides of the missing anchor stay")
        #expect(decoded.hasOlder && decoded.hasNewer)
        #expect(decoded.anchor?.index == nil && decoded.anchor?.found == false)
    }

    @Test func aFoundAnchorKeepsItsIndex() throws {
        let page = Page(rows: MessageRows(messages(1...41), conversationID: Self.conversation), hasOlder: false,
                        hasNewer: false, version: 41, anchor: Page.Anchor(id: 21, found: true, index: 20))
        let decoded = try decode(JSONWriter.page(page, budget: 40_000, trim: .keepAnchor))
        let index = try #require(decoded.anchor?.index)
        #expect(decoded.messages[index].id == 21)
        #expect(decoded.messages.count < 41)
    }
}
