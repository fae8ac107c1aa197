import HistoryClient
import HistoryTestSupport
import Testing

/// Thousands of random sequences of posts, edits, deletes, marker moves,
/// joins and leaves, pages and feed answers (some held back to race),
/// replayed from fixed seeds against the simulated inbox, checking after
/// every step that the inbox is sorted, duplicate-free, within capacity,
/// made of real row states that never go back, and that its changes replay
/// into its rows; and at every quiescent point that it is exactly the top of
/// the user's list, which scrolling down completes up to the capacity.
@Suite("Inbox property: random sequences")
struct InboxPropertyTests {
    /// 10 groups x 60 sequences x 150 steps: 600 sequences, 90,000 steps,
    /// each followed by every check. A failure names its seed and step.
    @Test(arguments: 0..<10)
    func randomSequencesKeepTheInboxTheTopOfTheList(group: Int) throws {
        var reached = InboxHarness.Statistics()
        for sequence in 0..<60 {
            let statistics = try replay(seed: group * 60 + sequence, steps: 150)
            reached.refreshes += statistics.refreshes
            reached.trimmedRows += statistics.trimmedRows
            reached.pagesFromTheTopAgain += statistics.pagesFromTheTopAgain
        }
        // The sequences reach the rare paths, or they prove little. (An answer
        // arriving after its cursor was dropped is rarer: InboxTests has it.)
        #expect(reached.refreshes > 0 && reached.trimmedRows > 0 && reached.pagesFromTheTopAgain > 0, "\(reached)")
    }

    private func replay(seed: Int, steps: Int) throws -> InboxHarness.Statistics {
        var random = SplitMix64(seed: UInt64(seed + 1) &* 0x9E37_79B9_7F4A_7C15)
        let pageSize = Int.random(in: 1...5, using: &random)
        let capacity = pageSize * Int.random(in: 1...4, using: &random) + Int.random(in: 0...3, using: &random)
        var harness = InboxHarness(pageSize: pageSize, capacity: capacity)
        let senders = [SimulatedInbox.user, "ana", "bob"]
        for _ in 0..<Int.random(in: 0...12, using: &random) {
            let id = harness.model.createConversation(member: Int.random(in: 0..<5, using: &random) > 0)
            for _ in 0..<Int.random(in: 0...3, using: &random) {
                harness.model.post(in: id, sender: senders.randomElement(using: &random)!,
                                   gap: Int64.random(in: 1...3, using: &random))
            }
        }
        harness.perform(.open)
        /// The newest activity of each row the feed delivered.
        var told: [String: Int64] = [:]
        /// The newest activity of each row the inbox ever showed: a row never goes back.
        var shown: [String: Int64] = [:]
        var heldPage: (request: InboxRequest, page: HistoryInboxPage)?
        var heldEvents: HistoryInboxEventBatch?

        func apply(_ batch: HistoryInboxEventBatch) {
            for case .updated(let row) in batch.events {
                told[row.conversation.id] = max(told[row.conversation.id] ?? 0, row.activity)
            }
            harness.apply(batch)
        }

        func deliverEvents(holding: Bool) {
            if let held = heldEvents {
                heldEvents = nil
                apply(held)
                return
            }
            let batch = harness.nextFeedAnswer(limit: Int.random(in: 1...4, using: &random))
            if holding { heldEvents = batch } else { apply(batch) }
        }

        func someMember() -> String? { harness.model.memberIDs.randomElement(using: &random) }

        for step in 0..<steps {
            let context = "seed \(seed) step \(step)"
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<14:
                if let id = someMember() {
                    harness.model.post(in: id, sender: senders.randomElement(using: &random)!,
                                       gap: Int64.random(in: 1...3, using: &random))
                }
            case 14..<17:
                if let id = harness.model.allIDs.randomElement(using: &random) {
                    harness.model.post(in: id, sender: "ana")
                }
            case 17..<21:
                if let id = someMember() {
                    harness.model.edit(in: id, at: Int.random(in: 0..<4, using: &random))
                }
            case 21..<24:
                if let id = someMember() {
                    harness.model.delete(in: id, at: Int.random(in: 0..<4, using: &random))
                }
            case 24..<30:
                if let id = someMember() {
                    harness.model.markRead(in: id, upTo: Int64.random(in: 0...200, using: &random))
                }
            case 30..<33:
                harness.model.createConversation(member: Bool.random(using: &random))
            case 33..<36:
                if let id = harness.model.allIDs.randomElement(using: &random) {
                    harness.model.join(id, role: Bool.random(using: &random) ? .member : .owner)
                }
            case 36..<39:
                if let id = someMember() { harness.model.leave(id) }
            case 39..<58:
                deliverEvents(holding: Bool.random(using: &random))
            case 58..<85:
                let intent: InboxIntent = Int.random(in: 0..<4, using: &random) == 0 ? .open : .scrollDown
                if let request = harness.inbox.nextRequest(for: intent) {
                    let page = harness.model.page(cursor: request.cursor, limit: request.limit)
                    if heldPage == nil, Bool.random(using: &random) {
                        heldPage = (request, page)
                    } else {
                        harness.deliver(page, for: request)
                    }
                }
            default:
                if let held = heldPage {
                    heldPage = nil
                    harness.deliver(held.page, for: held.request)
                }
            }
            try checkStructure(harness, told: told, shown: &shown, context: context)

            if step % 25 == 24 {
                // Quiescence: nothing in flight, the feed caught up.
                if let held = heldPage {
                    heldPage = nil
                    harness.deliver(held.page, for: held.request)
                }
                deliverEvents(holding: false)
                deliverEvents(holding: false)
                try checkStructure(harness, told: told, shown: &shown, context: context)
                try checkQuiescent(harness, context: context)
                if step % 50 == 49 {
                    try scrollToTheEnd(&harness, context: context)
                    try checkStructure(harness, told: told, shown: &shown, context: context)
                }
            }
        }
        return harness.statistics
    }

    /// True after every step, even with a page in flight and the feed behind.
    private func checkStructure(_ harness: InboxHarness, told: [String: Int64], shown: inout [String: Int64],
                                context: String) throws {
        let inbox = harness.inbox
        let rows = inbox.rows
        #expect(rows.count <= inbox.configuration.capacity, "over capacity, \(context)")
        #expect(zip(rows, rows.dropFirst()).allSatisfy { SimulatedInbox.precedes($0, $1) },
                "not in order or duplicated, \(context)")
        #expect(Set(harness.ids).count == rows.count, "duplicated, \(context)")
        #expect(harness.changeMismatch == nil, "\(harness.changeMismatch ?? ""), \(context)")
        for row in rows {
            let id = row.conversation.id
            #expect(harness.model.history[id]?.contains(row) == true, "row \(id) a\(row.activity) was never a state, \(context)")
            #expect(row.activity >= (told[id] ?? 0), "row \(id) older than the feed said, \(context)")
            #expect(row.activity >= (shown[id] ?? 0), "row \(id) went back, \(context)")
            shown[id] = max(shown[id] ?? 0, row.activity)
        }
    }

    /// True once nothing is in flight and the feed caught up: the rows are
    /// the top of the user's list, in their current states.
    private func checkQuiescent(_ harness: InboxHarness, context: String) throws {
        let inbox = harness.inbox
        let all = harness.model.sortedRows
        #expect(inbox.rows == Array(all.prefix(inbox.rows.count)), "not the top of the list, \(context)")
        #expect(inbox.hasMore || inbox.rows.count == all.count, "claims the end too early, \(context)")
    }

    /// Scrolls down until the inbox asks for nothing: it then holds the top
    /// `capacity` rows (all of them when fewer).
    private func scrollToTheEnd(_ harness: inout InboxHarness, context: String) throws {
        var requests = 0
        while harness.inbox.nextRequest(for: .scrollDown) != nil {
            harness.perform(.scrollDown)
            requests += 1
            try #require(requests < 500, "paging does not end, \(context)")
        }
        let all = harness.model.sortedRows
        let expected = Array(all.prefix(harness.inbox.configuration.capacity))
        #expect(harness.inbox.rows == expected, "scrolled to the end short, \(context)")
        #expect(!harness.inbox.hasMore || harness.inbox.isAtCapacity, "more without asking, \(context)")
    }
}
