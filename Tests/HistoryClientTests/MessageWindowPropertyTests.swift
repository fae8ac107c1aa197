import HistoryClient
import HistoryTestSupport
import Testing

/// Thousands of random scroll / post / edit / delete / delivery sequences,
/// replayed from fixed seeds against the simulated conversation, checking
/// after every step that the window is a contiguous, ascending,
/// duplicate-free slice of the conversation within capacity, whose rows are
/// real states of their messages, never older than what the feed told it and
/// never older than what the window showed before. Pages and poll answers
/// are held back at random to race with each other.
@Suite("MessageWindow property: random sequences")
struct MessageWindowPropertyTests {
    /// 10 groups x 100 sequences x 120 steps: 1,000 sequences, 120,000 steps,
    /// each followed by every check. A failure names its seed and step.
    @Test(arguments: 0..<10)
    func randomSequencesKeepTheWindowAFreshContiguousSlice(group: Int) throws {
        for sequence in 0..<100 {
            try replay(seed: group * 100 + sequence, steps: 120)
        }
    }

    private func replay(seed: Int, steps: Int) throws {
        var random = SplitMix64(seed: UInt64(seed + 1) &* 0x2545_F491_4F6C_DD1D)
        let pageSize = Int.random(in: 2...8, using: &random)
        let capacity = pageSize * Int.random(in: 1...4, using: &random) + Int.random(in: 0...3, using: &random)
        var harness = WindowHarness(pageSize: pageSize, capacity: capacity)
        for _ in 0..<Int.random(in: 0...60, using: &random) {
            harness.conversation.post(idGap: Int64.random(in: 1...3, using: &random))
        }
        harness.perform(.open)
        /// The newest version of each message the feed delivered to the window.
        var told: [Int64: Int64] = [:]
        /// The newest version of each message the window ever showed: a row never goes back.
        var shown: [Int64: Int64] = [:]
        /// A page answered but not yet delivered: the race.
        var heldPage: (request: WindowRequest, page: HistoryPage)?

        /// A poll answered but not yet applied: the other race. Answers apply in order.
        var heldEvents: HistoryEventBatch?

        func apply(_ batch: HistoryEventBatch) {
            for event in batch.events { told[event.message.id] = max(told[event.message.id] ?? 0, event.version) }
            if !batch.events.isEmpty { _ = harness.window.apply(batch.events, through: batch.version) }
        }

        func deliverEvents(holding: Bool) {
            if let held = heldEvents {
                heldEvents = nil
                apply(held)
                return
            }
            let since = harness.streamVersion ?? 0
            let batch = harness.conversation.coalescedEvents(since: since, limit: Int.random(in: 1...4, using: &random))
            harness.streamVersion = batch.version
            if holding { heldEvents = batch } else { apply(batch) }
        }

        for step in 0..<steps {
            let context = "seed \(seed) step \(step)"
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<15:
                harness.conversation.post(idGap: Int64.random(in: 1...3, using: &random))
            case 15..<22:
                if let id = harness.conversation.ids.randomElement(using: &random) {
                    harness.conversation.edit(id, body: "edit \(step)")
                }
            case 22..<27:
                if let id = harness.conversation.ids.randomElement(using: &random) {
                    harness.conversation.delete(id)
                }
            case 27..<45:
                deliverEvents(holding: Bool.random(using: &random))
            case 45..<85:
                let intents: [WindowIntent] = [.scrollUp, .scrollUp, .scrollDown, .reachedBottom,
                                               .jump(to: harness.conversation.ids.randomElement(using: &random) ?? 1),
                                               .openAtFirstUnread(harness.conversation.ids.randomElement(using: &random))]
                let intent = intents.randomElement(using: &random)!
                if let request = harness.window.nextRequest(for: intent) {
                    let page = harness.conversation.page(request)
                    if heldPage == nil, Bool.random(using: &random) {
                        heldPage = (request, page)
                    } else {
                        harness.deliver(page, for: request)
                    }
                } else if intent == .reachedBottom {
                    _ = harness.window.settleAtBottom()
                }
            default:
                if let held = heldPage {
                    heldPage = nil
                    harness.deliver(held.page, for: held.request)
                }
            }
            try checkStructure(harness, told: told, shown: &shown, context: context)

            if step % 20 == 19 {
                // Quiescence: nothing in flight, the feed caught up.
                if let held = heldPage {
                    heldPage = nil
                    harness.deliver(held.page, for: held.request)
                }
                deliverEvents(holding: false)
                deliverEvents(holding: false)
                try checkStructure(harness, told: told, shown: &shown, context: context)
                try checkQuiescent(harness, context: context)
            }
        }
    }

    /// True after every step, even with a page in flight and the feed behind.
    private func checkStructure(_ harness: WindowHarness, told: [Int64: Int64], shown: inout [Int64: Int64],
                                context: String) throws {
        let window = harness.window
        let ids = harness.ids
        let all = harness.conversation.ids
        #expect(ids.count <= window.configuration.capacity, "over capacity, \(context)")
        #expect(zip(ids, ids.dropFirst()).allSatisfy { $0 < $1 }, "not ascending or duplicated, \(context)")
        if let first = ids.first {
            let start = try #require(all.firstIndex(of: first), "unknown id \(first), \(context)")
            #expect(Array(all[start..<min(all.count, start + ids.count)]) == ids, "gap, \(context)")
            #expect(window.hasOlder || start == 0, "claims nothing is older, \(context)")
        }
        for row in window.messages {
            let states = harness.conversation.history[row.id] ?? []
            #expect(states.contains(row), "row \(row.id) v\(row.version) was never a state, \(context)")
            #expect(row.version >= (told[row.id] ?? 0), "row \(row.id) older than the feed said, \(context)")
            #expect(row.version >= (shown[row.id] ?? 0), "row \(row.id) went back a version, \(context)")
            shown[row.id] = max(shown[row.id] ?? 0, row.version)
        }
        // One way only: a page saying `has_newer` may reveal a message the feed has not delivered yet.
        if window.attachedToTail {
            #expect(window.newestKnownID == nil || ids.last == window.newestKnownID,
                    "attached without the newest known message, \(context)")
        }
    }

    /// True once nothing is in flight and the feed caught up.
    private func checkQuiescent(_ harness: WindowHarness, context: String) throws {
        let window = harness.window
        for row in window.messages {
            #expect(row == harness.conversation.message(row.id), "row \(row.id) stale, \(context)")
        }
        let newest = harness.conversation.newestID
        #expect(window.attachedToTail == (window.newestID == newest), "attached != holds newest, \(context)")
        #expect(window.hasOlder == (window.oldestID != harness.conversation.ids.first), "hasOlder wrong, \(context)")
    }
}
