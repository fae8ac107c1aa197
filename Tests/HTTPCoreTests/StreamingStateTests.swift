import Testing
@testable import HTTPCore

/// A streamed answer (`HTTPResponseStream`) in the connection's state
/// machine: made-up instants, no clock.
@Suite("ConnectionStateMachine: streamed answers")
struct StreamingStateTests {
    static let second: UInt64 = 1_000_000_000
    let start = 1000 * StreamingStateTests.second

    func streaming(isHead: Bool = false, keepAlive: Bool = true) -> ConnectionStateMachine {
        var state = ConnectionStateMachine(now: start, timeouts: .init(limits: HTTPLimits()), outputBudget: 1000,
                                           inputHighWater: 500)
        let line = ConnectionStateMachine.RequestLine(method: isHead ? "HEAD" : "GET", target: "/events")
        let number = state.requestReceived(line, isHead: isHead, version: .http1_1, keepAlive: keepAlive, now: start).number
        guard case .write(_, let closeAfter) = state.answerReady(for: number, now: start, streaming: true) else {
            Issue.record("the streamed answer was dropped")
            return state
        }
        #expect(closeAfter, "a stream always closes its connection")
        return state
    }

    @Test func aStreamTakesNoFurtherRequestAndOnlyDrainsInput() {
        let state = streaming()
        #expect(state.isStreaming)
        #expect(!state.canTakeRequest)
        #expect(!state.parsesInput)
        #expect(state.shouldRead(bufferedInput: 10_000))
        // No idle or handler deadline: a quiet stream is not a stalled request.
        #expect(state.deadline == nil)
    }

    @Test func itsEndClosesOnceEverythingIsWritten() {
        var state = streaming()
        state.outputQueued(300, now: start)
        #expect(state.outputWritten(300, now: start) == .none)  // streaming on: no linger after a piece
        state.outputQueued(200, now: start + 1)
        #expect(state.streamEnded(now: start + 1) == .none)
        #expect(state.phase == .closing)
        #expect(state.outputWritten(200, now: start + 2) == .startLinger)
    }

    @Test func anEndWithNothingQueuedLingersAtOnce() {
        var state = streaming()
        #expect(state.streamEnded(now: start) == .startLinger)
        #expect(state.streamEnded(now: start) == .none)  // a second end changes nothing
    }

    @Test func thePeerLeavingClosesTheStream() {
        var state = streaming()
        #expect(state.inputEnded(now: start + StreamingStateTests.second) == .close)
        #expect(state.phase == .closed)
    }

    @Test func aStreamThatIsNotReadIsAbortedAtTheWriteTimeout() {
        var state = streaming()
        state.outputQueued(5000, now: start)
        #expect(state.deadline == start + 30 * StreamingStateTests.second)
        #expect(state.timerFired(now: start + 29 * StreamingStateTests.second) == .none)
        #expect(state.timerFired(now: start + 30 * StreamingStateTests.second) == .abort)
    }

    @Test func aHeadRequestGetsTheHeadThenTheConnectionCloses() {
        var state = streaming(isHead: true)
        #expect(!state.isStreaming)
        #expect(state.phase == .closing)
        state.outputQueued(100, now: start)
        #expect(state.outputWritten(100, now: start) == .startLinger)
    }

    @Test func shutdownLeavesAStreamToItsOwner() {
        var state = streaming()
        #expect(state.shutdownRequested() == .none)
        #expect(state.isStreaming)
        #expect(state.streamEnded(now: start) == .startLinger)
    }
}
