import HistoryClient
import HistoryTestSupport
import Testing

/// Every change list a window returns, replayed on the rows before it,
/// gives the rows after it: what a UIKit data source or a diffable snapshot
/// does step by step, over random sequences of pages, events, trims and jumps
/// (400 sequences of 100 steps, over 8,000 non-empty change lists).
@Suite("WindowChange replay: random change lists")
struct WindowChangeReplayTests {
    @Test(arguments: 0..<4)
    func replayingEveryChangeListGivesTheNewRows(group: Int) throws {
        var replayed = 0
        for sequence in 0..<100 {
            replayed += try run(seed: group * 100 + sequence, steps: 100)
        }
        #expect(replayed > 2_000)
    }

    /// Returns how many non-empty change lists were replayed.
    private func run(seed: Int, steps: Int) throws -> Int {
        var random = SplitMix64(seed: UInt64(seed + 7) &* 0x9E37_79B9_7F4A_7C15)
        let pageSize = Int.random(in: 2...6, using: &random)
        let capacity = pageSize * Int.random(in: 1...3, using: &random) + Int.random(in: 0...2, using: &random)
        var harness = WindowHarness(pageSize: pageSize, capacity: capacity)
        for _ in 0..<Int.random(in: 0...40, using: &random) {
            harness.conversation.post(idGap: Int64.random(in: 1...2, using: &random))
        }
        var replayed = 0
        func check(_ changes: [WindowChange], before: [HistoryMessage], step: Int) {
            let after = harness.window.messages
            let replay = WindowChange.replay(changes, on: before, final: after, id: \.id)
            #expect(replay == after, "seed \(seed) step \(step): \(changes)")
            if !changes.isEmpty { replayed += 1 }
        }
        let before = harness.window.messages
        check(harness.perform(.open), before: before, step: -1)
        for step in 0..<steps {
            switch Int.random(in: 0..<10, using: &random) {
            case 0...2:
                for _ in 0..<Int.random(in: 1...(capacity * 2), using: &random) {
                    harness.conversation.post(idGap: Int64.random(in: 1...2, using: &random))
                }
            case 3:
                if let id = harness.conversation.ids.randomElement(using: &random) {
                    harness.conversation.edit(id, body: "edit \(step)")
                }
            case 4:
                if let id = harness.conversation.ids.randomElement(using: &random) {
                    harness.conversation.delete(id)
                }
            case 5...6:
                let before = harness.window.messages
                check(harness.deliverEvents(limit: Int.random(in: 1...(capacity * 3), using: &random)),
                      before: before, step: step)
            default:
                let newest = harness.conversation.newestID ?? 1
                let intents: [WindowIntent] = [.scrollUp, .scrollUp, .scrollDown, .reachedBottom, .open,
                                               .jump(to: Int64.random(in: 1...(newest + 2), using: &random))]
                let before = harness.window.messages
                check(harness.perform(intents.randomElement(using: &random)!), before: before, step: step)
            }
        }
        return replayed
    }
}
