import Testing
@testable import HTTPCore

/// Instants are made-up nanoseconds: no clock, no sleep.
private let second: UInt64 = 1_000_000_000

private func machine(at now: UInt64 = 1000 * second) -> ConnectionStateMachine {
    ConnectionStateMachine(now: now, timeouts: .init(limits: HTTPLimits()), outputHighWater: 1000, inputHighWater: 500)
}

@Suite("ConnectionStateMachine")
struct ConnectionStateMachineTests {
    let start = 1000 * second

    @Test func aFreshConnectionThatSendsNothingClosesQuietlyAfterTheHeadTimeout() {
        var state = machine(at: start)
        #expect(state.deadline == start + 10 * second)
        #expect(state.timerFired(now: start + 9 * second) == .none)
        #expect(state.timerFired(now: start + 10 * second) == .close)
        #expect(state.phase == .closed)
    }

    @Test func anIncompleteHeadIsAnswered408() {
        var state = machine(at: start)
        state.partialRequestBuffered(now: start + second)
        #expect(state.phase == .readingHead)
        #expect(state.deadline == start + 11 * second)
        #expect(state.timerFired(now: start + 11 * second) == .fail(.requestTimeout))
        #expect(state.phase == .closing)
        #expect(!state.canTakeRequest)
    }

    @Test func aSlowBodyIsAnswered408AfterTheBodyTimeout() {
        var state = machine(at: start)
        state.partialRequestBuffered(now: start)
        #expect(state.headReceived(now: start + second, expectsContinue: false) == .none)
        #expect(state.deadline == start + 31 * second)
        #expect(state.timerFired(now: start + 30 * second) == .none)
        #expect(state.timerFired(now: start + 31 * second) == .fail(.requestTimeout))
    }

    @Test func continueIsAskedForWhenTheHeadExpectsIt() {
        var state = machine(at: start)
        #expect(state.headReceived(now: start, expectsContinue: true) == .sendContinue)
    }

    @Test func keepAliveGoesBackToIdleWithTheIdleTimeout() {
        var state = machine(at: start)
        state.partialRequestBuffered(now: start)
        state.requestReceived(keepAlive: true)
        #expect(state.phase == .handling)
        #expect(state.deadline == nil)  // the handler's time is its own
        #expect(!state.canTakeRequest)  // pipelined requests wait
        #expect(state.responseReady(now: start + 5 * second) == false)
        #expect(state.phase == .idle)
        #expect(state.canTakeRequest)
        #expect(state.deadline == start + 65 * second)
        #expect(state.timerFired(now: start + 64 * second) == .none)
        #expect(state.timerFired(now: start + 65 * second) == .close)
    }

    @Test func aClosingAnswerLingersThenCloses() {
        var state = machine(at: start)
        state.requestReceived(keepAlive: false)
        #expect(state.responseReady(now: start) == true)
        state.outputQueued(100, now: start)
        #expect(state.outputWritten(60, now: start) == .none)
        #expect(state.outputWritten(40, now: start + 1) == .startLinger)
        #expect(state.phase == .lingering)
        #expect(state.shouldRead(bufferedInput: 0))  // drain what the peer still sends
        #expect(state.deadline == start + 1 + 2 * second)
        #expect(state.inputEnded(now: start + second) == .close)
    }

    @Test func lingerEndsAtItsDeadline() {
        var state = machine(at: start)
        #expect(state.parseFailed(.invalidMethod) == .fail(.invalidMethod))
        state.outputQueued(10, now: start)
        #expect(state.outputWritten(10, now: start) == .startLinger)
        #expect(state.timerFired(now: start + 2 * second) == .close)
    }

    @Test func thePeerGoingAwayDuringAHandlerIsReportedAndClosesAfterTheAnswer() {
        var state = machine(at: start)
        state.requestReceived(keepAlive: true)
        #expect(state.inputEnded(now: start) == .notifyPeerGone)
        #expect(!state.shouldRead(bufferedInput: 0))
        #expect(state.responseReady(now: start) == true)
        state.outputQueued(10, now: start)
        #expect(state.outputWritten(10, now: start) == .close)  // no linger: the input is gone already
    }

    @Test func aHandlerThatNeverAnswersAPeerThatLeftIsCutOffAfterTheIdleTimeout() {
        var state = machine(at: start)
        state.requestReceived(keepAlive: true)
        #expect(state.deadline == nil)
        #expect(state.inputEnded(now: start + second) == .notifyPeerGone)
        #expect(state.deadline == start + 61 * second)
        #expect(state.timerFired(now: start + 61 * second) == .close)
    }

    @Test func requestsPipelinedBeforeAHalfCloseAreAnsweredThenTheConnectionCloses() {
        var state = machine(at: start)
        state.requestReceived(keepAlive: true)
        #expect(state.inputEnded(now: start, bufferedInput: true) == .notifyPeerGone)
        // The next request is waiting in the parser: keep going, keep-alive.
        #expect(state.responseReady(now: start, bufferedInput: true) == false)
        #expect(state.phase == .idle && state.canTakeRequest)
        state.requestReceived(keepAlive: true)
        // Nothing after it: this answer is the last, with Connection: close.
        #expect(state.responseReady(now: start, bufferedInput: false) == true)
        #expect(state.phase == .closing)
    }

    @Test func endOfInputWithRequestsStillBufferedLeavesThemToTheParser() {
        var idle = machine(at: start)
        #expect(idle.inputEnded(now: start, bufferedInput: true) == .none)
        #expect(idle.phase == .idle && idle.canTakeRequest)
        // The parser ran dry with no request left: close once written.
        idle.outputQueued(10, now: start)
        #expect(idle.bufferedInputEnded(now: start) == .none)
        #expect(idle.phase == .closing)
        #expect(idle.outputWritten(10, now: start) == .close)

        var partial = machine(at: start)
        #expect(partial.inputEnded(now: start, bufferedInput: true) == .none)
        partial.partialRequestBuffered(now: start)
        #expect(partial.bufferedInputEnded(now: start) == .fail(.truncatedRequest))
    }

    @Test func endOfInputMidRequestIsATruncatedRequest() {
        var state = machine(at: start)
        state.partialRequestBuffered(now: start)
        #expect(state.inputEnded(now: start) == .fail(.truncatedRequest))
    }

    @Test func endOfInputWhileIdleCloses() {
        var state = machine(at: start)
        #expect(state.inputEnded(now: start) == .close)
    }

    @Test func shutdownClosesIdleConnectionsAndFinishesBusyOnesWithClose() {
        var idle = machine(at: start)
        #expect(idle.shutdownRequested() == .close)

        var busy = machine(at: start)
        busy.requestReceived(keepAlive: true)
        #expect(busy.shutdownRequested() == .none)
        #expect(busy.responseReady(now: start) == true)

        var reading = machine(at: start)
        reading.partialRequestBuffered(now: start)
        #expect(reading.shutdownRequested() == .none)
        reading.requestReceived(keepAlive: true)
        #expect(reading.responseReady(now: start) == true)
    }

    @Test func queuedOutputStopsReadingAndTakingRequests() {
        var state = machine(at: start)
        state.outputQueued(1000, now: start)
        #expect(!state.canTakeRequest)
        #expect(!state.shouldRead(bufferedInput: 0))
        #expect(state.outputWritten(1, now: start + second) == .none)
        #expect(state.canTakeRequest)
        #expect(state.shouldRead(bufferedInput: 0))
    }

    @Test func pipelinedInputIsBoundedWhileAHandlerRuns() {
        var state = machine(at: start)
        state.requestReceived(keepAlive: true)
        #expect(state.shouldRead(bufferedInput: 499))
        #expect(!state.shouldRead(bufferedInput: 500))
    }

    @Test func aPeerThatNeverReadsIsDroppedAfterTheWriteTimeout() {
        var state = machine(at: start)
        state.requestReceived(keepAlive: true)
        #expect(state.responseReady(now: start) == false)
        state.outputQueued(5000, now: start)
        #expect(state.outputWritten(100, now: start + 10 * second) == .none)
        #expect(state.deadline == start + 70 * second)
        #expect(state.timerFired(now: start + 69 * second) == .none)
        #expect(state.timerFired(now: start + 70 * second) == .close)
    }

    @Test func aLateTimerAfterTheDeadlineMovedDoesNothing() {
        var state = machine(at: start)
        state.requestReceived(keepAlive: true)
        #expect(state.timerFired(now: start + 3600 * second) == .none)
        #expect(state.responseReady(now: start + 3600 * second) == false)
        #expect(state.timerFired(now: start + 3601 * second) == .none)
    }
}
