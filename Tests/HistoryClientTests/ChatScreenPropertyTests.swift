import HistoryClient
import HistoryTestSupport
import Testing

/// The chat screen model on a simulated phone: random seeded sessions of
/// scrolls, posts by others, edits, deletes, feed answers, jumps, sends,
/// server failures, lost answers, typing, and trips to the background with
/// a long backlog, each frame checked against CLIENTS.md's rules (see
/// ``Violation/Kind``). The same simulator pointed at the old DocC sample's
/// rules catches each of its bugs.
@Suite("Chat screen model: viewport simulation")
struct ChatScreenPropertyTests {
    /// 8 groups x 20 sessions x 320 inputs; every input and every viewport
    /// report it causes is a step, each checked: about 124,000 steps (over
    /// 100,000 required).
    @Test(arguments: 0..<8)
    func randomSessionsKeepEveryRule(group: Int) async throws {
        // CPU-bound for seconds: on a thread of its own, not one of the two
        // cooperative threads the async tests beside it need.
        let (steps, violations) = try await onOwnThread { () -> (Int, [String]) in
            var steps = 0
            var violations: [Violation] = []
            for session in 0..<20 {
                let simulator = Self.simulate(ModelScreen.self, seed: group * 1000 + session, inputs: 320)
                steps += simulator.steps
                violations += simulator.violations
                if violations.count > 20 { break }
            }
            return (steps, violations.prefix(20).map(\.description))
        }
        #expect(violations.isEmpty, "\(violations)")
        #expect(steps >= 12_500, "\(steps) steps")
    }

    /// The sample the DocC article showed before the model: each of its
    /// bugs breaks a rule the simulator checks.
    @Test func theOldSampleLogicIsCaughtOnEachBug() async throws {
        let found = try await onOwnThread { () -> Set<String> in
            var found: Set<String> = []
            for seed in 0..<60 {
                for violation in Self.simulate(OldSampleScreen.self, seed: seed, inputs: 200).violations {
                    found.insert(violation.kind.rawValue)
                }
            }
            return found
        }
        // isAtBottom never false; .reachedBottom on the last loaded row;
        // .trimmed ignored; the prepend anchor a frame late; the feed from 0
        // after a failed open; .defaultScrollAnchor(.bottom); errors swallowed.
        let expected: Set<Violation.Kind> = [.pulledByNewMessages, .visibleRowsReplaced, .readRowMoved,
                                             .anchorRestoredLate, .feedReplayed, .shortChatNotTop, .errorSwallowed]
        let missing = Set(expected.map(\.rawValue)).subtracting(found)
        #expect(missing.isEmpty, "not caught: \(missing)")
    }

    private static func simulate<S: ScreenUnderTest & SimulatedScreenMaking>(_ type: S.Type, seed: Int, inputs: Int)
        -> ViewportSimulator<S> {
        var random = SplitMix64(seed: UInt64(seed + 11) &* 0xD1B5_4A32_D192_ED03)
        let pageSize = Int.random(in: 3...8, using: &random)
        let capacity = pageSize * Int.random(in: 2...5, using: &random)
        var server = SimulatedServer()
        let initial = Int.random(in: 0..<4, using: &random) == 0
            ? Int.random(in: 0...4, using: &random) : Int.random(in: 0...(capacity * 3), using: &random)
        for _ in 0..<initial { server.conversation.post(idGap: Int64.random(in: 1...2, using: &random)) }
        var simulator = ViewportSimulator(
            screen: S.make(MessageWindowConfiguration(pageSize: pageSize, capacity: capacity)),
            server: server, screenHeight: Double(Int.random(in: 300...700, using: &random)))
        var sends = 0
        func others(_ count: Int) {
            for _ in 0..<count {
                simulator.server.conversation.post(idGap: Int64.random(in: 1...2, using: &random))
            }
        }
        func randomID() -> Int64 {
            if Bool.random(using: &random), let row = simulator.screen.windowMessages.randomElement(using: &random) {
                return row.id
            }
            return Int64.random(in: 1...((simulator.server.conversation.newestID ?? 1) + 2), using: &random)
        }
        simulator.server.down = Int.random(in: 0..<6, using: &random) == 0
        simulator.step(.open, context: "seed \(seed) open")
        if simulator.server.down { simulator.expectErrorShown(context: "seed \(seed) open while down") }
        for input in 0..<inputs {
            let context = "seed \(seed) input \(input)"
            if simulator.screen.windowMessages.isEmpty, simulator.screen.feedStart == nil,
               !simulator.server.down, Int.random(in: 0..<3, using: &random) == 0 {
                simulator.step(.open, context: context)
                continue
            }
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<30:
                let screen = simulator.screenHeight
                let delta = Int.random(in: 0..<20, using: &random) == 0
                    ? (Bool.random(using: &random) ? 1e6 : -1e6)
                    : Double.random(in: -1.2...1.2, using: &random) * screen
                simulator.scroll(by: delta)
            case 30..<42:
                others(Int.random(in: 0..<25, using: &random) == 0 ? capacity * 2 : Int.random(in: 1...3, using: &random))
            case 42..<46:
                let id = randomID()
                simulator.server.conversation.edit(id, body: "edited \(input)")
            case 46..<50:
                simulator.server.conversation.delete(randomID())
            case 50..<67:
                simulator.step(.deliverFeed(limit: Int.random(in: 1...(capacity + 2), using: &random)), context: context)
            case 67..<70:
                simulator.step(.jump(randomID()), context: context)
            case 70..<72:
                simulator.step(.jumpToLatest, context: context)
            case 72..<77:
                sends += 1
                simulator.send("s\(seed)-\(sends)", context: context)
            case 77..<81:
                simulator.step(.retrySends, context: context)
            case 81..<84:
                simulator.server.down.toggle()
                simulator.server.losesNextAnswer = Bool.random(using: &random)
            case 84..<87:
                simulator.step(.suspend, context: context)
                others(Bool.random(using: &random) ? capacity * 3 : Int.random(in: 0...3, using: &random))
                simulator.step(.resume, context: context)
                for _ in 0..<4 { simulator.step(.deliverFeed(limit: capacity), context: context) }
            case 87..<90:
                let users = Bool.random(using: &random) ? [] : ["ben"]
                simulator.step(.typing(users), context: context)
            case 90..<92:
                simulator.step(.retryFailed, context: context)
            default:
                simulator.scroll(by: Double.random(in: -60...60, using: &random))
            }
        }
        if S.sends { simulator.settleSends(context: "seed \(seed) end") }
        return simulator
    }
}

/// How a simulation makes its screen, and whether it has an outbox.
protocol SimulatedScreenMaking {
    static func make(_ configuration: MessageWindowConfiguration) -> Self
    static var sends: Bool { get }
}

extension ModelScreen: SimulatedScreenMaking {
    static func make(_ configuration: MessageWindowConfiguration) -> ModelScreen { ModelScreen(configuration: configuration) }
    static var sends: Bool { true }
}

extension OldSampleScreen: SimulatedScreenMaking {
    static func make(_ configuration: MessageWindowConfiguration) -> OldSampleScreen {
        OldSampleScreen(configuration: configuration)
    }
    static var sends: Bool { false }
}
