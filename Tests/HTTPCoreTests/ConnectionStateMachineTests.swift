import Testing
@testable import HTTPCore

/// Instants are made-up nanoseconds: no clock, no sleep.
private let second: UInt64 = 1_000_000_000

private func machine(at now: UInt64 = 1000 * second) -> ConnectionStateMachine {
    ConnectionStateMachine(now: now, timeouts: .init(limits: HTTPLimits()), outputBudget: 1000, inputHighWater: 500)
}

private let getRoot = ConnectionStateMachine.RequestLine(method: "GET", target: "/")

extension ConnectionStateMachine {
    /// Takes a whole `GET /` the way the connection does; its number.
    @discardableResult
    mutating func receive(keepAlive: Bool, now: UInt64 = 0) -> Int {
        requestReceived(getRoot, isHead: false, version: .http1_1, keepAlive: keepAlive, now: now).number
    }

    /// Answers the request being handled: whether the connection closes after it.
    mutating func answerHandled(now: UInt64, bufferedInput: Bool = false) -> Bool? {
        guard case .handling(let request) = phase else { return nil }
        guard case .write(_, let closeAfter) = answerReady(for: request.number, now: now, bufferedInput: bufferedInput)
        else { return nil }
        return closeAfter
    }

    var isHandling: Bool {
        if case .handling = phase { return true }
        return false
    }
}

private func failure(_ action: ConnectionStateMachine.TimerAction) -> RequestParseError? {
    if case .fail(let failure) = action { return failure.error }
    return nil
}

private func failure(_ action: ConnectionStateMachine.InputEndAction) -> RequestParseError? {
    if case .fail(let failure) = action { return failure.error }
    return nil
}

private func failure(_ action: ConnectionStateMachine.ParseFailureAction) -> RequestParseError? {
    switch action {
    case .fail(let failure): failure.error
    }
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
        #expect(failure(state.timerFired(now: start + 11 * second)) == .requestTimeout)
        #expect(state.phase == .closing)
        #expect(!state.canTakeRequest)
    }

    @Test func aSlowBodyIsAnswered408AfterTheBodyTimeout() {
        var state = machine(at: start)
        state.partialRequestBuffered(now: start)
        #expect(state.headReceived(getRoot, now: start + second, expectsContinue: false) == .none)
        #expect(state.deadline == start + 31 * second)
        #expect(state.timerFired(now: start + 30 * second) == .none)
        #expect(failure(state.timerFired(now: start + 31 * second)) == .requestTimeout)
    }

    @Test func continueIsAskedForWhenTheHeadExpectsIt() {
        var state = machine(at: start)
        #expect(state.headReceived(getRoot, now: start, expectsContinue: true) == .sendContinue)
    }

    @Test func keepAliveGoesBackToIdleWithTheIdleTimeout() {
        var state = machine(at: start)
        state.partialRequestBuffered(now: start)
        state.receive(keepAlive: true)
        #expect(state.isHandling)
        #expect(state.deadline == nil)  // the handler's time is its own
        #expect(!state.canTakeRequest)  // pipelined requests wait
        #expect(state.answerHandled(now: start + 5 * second) == false)
        #expect(state.phase == .idle)
        #expect(state.canTakeRequest)
        #expect(state.deadline == start + 65 * second)
        #expect(state.timerFired(now: start + 64 * second) == .none)
        #expect(state.timerFired(now: start + 65 * second) == .close)
    }

    @Test func aClosingAnswerLingersThenCloses() {
        var state = machine(at: start)
        state.receive(keepAlive: false)
        #expect(state.answerHandled(now: start) == true)
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
        #expect(failure(state.parseFailed(.invalidMethod, now: start)) == .invalidMethod)
        state.outputQueued(10, now: start)
        #expect(state.outputWritten(10, now: start) == .startLinger)
        #expect(state.timerFired(now: start + 2 * second) == .close)
    }

    @Test func thePeerGoingAwayDuringAHandlerIsReportedAndClosesAfterTheAnswer() {
        var state = machine(at: start)
        state.receive(keepAlive: true)
        #expect(state.inputEnded(now: start) == .notifyPeerGone)
        #expect(!state.shouldRead(bufferedInput: 0))
        #expect(state.answerHandled(now: start) == true)
        state.outputQueued(10, now: start)
        #expect(state.outputWritten(10, now: start) == .close)  // no linger: the input is gone already
    }

    @Test func aHandlerThatNeverAnswersAPeerThatLeftIsCutOffAfterTheIdleTimeout() {
        var state = machine(at: start)
        state.receive(keepAlive: true)
        #expect(state.deadline == nil)
        #expect(state.inputEnded(now: start + second) == .notifyPeerGone)
        #expect(state.deadline == start + 61 * second)
        #expect(state.timerFired(now: start + 61 * second) == .close)
    }

    @Test func requestsPipelinedBeforeAHalfCloseAreAnsweredThenTheConnectionCloses() {
        var state = machine(at: start)
        state.receive(keepAlive: true)
        #expect(state.inputEnded(now: start, bufferedInput: true) == .notifyPeerGone)
        // The next request is waiting in the parser: keep going, keep-alive.
        #expect(state.answerHandled(now: start, bufferedInput: true) == false)
        #expect(state.phase == .idle && state.canTakeRequest)
        state.receive(keepAlive: true)
        // Nothing after it: this answer is the last, with Connection: close.
        #expect(state.answerHandled(now: start, bufferedInput: false) == true)
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
        #expect(failure(partial.bufferedInputEnded(now: start)) == .truncatedRequest)
    }

    @Test func endOfInputMidRequestIsATruncatedRequest() {
        var state = machine(at: start)
        state.partialRequestBuffered(now: start)
        #expect(failure(state.inputEnded(now: start)) == .truncatedRequest)
    }

    @Test func endOfInputWhileIdleCloses() {
        var state = machine(at: start)
        #expect(state.inputEnded(now: start) == .close)
    }

    @Test func shutdownClosesIdleConnectionsAndFinishesBusyOnesWithClose() {
        var idle = machine(at: start)
        #expect(idle.shutdownRequested() == .close)

        var busy = machine(at: start)
        busy.receive(keepAlive: true)
        #expect(busy.shutdownRequested() == .none)
        #expect(busy.answerHandled(now: start) == true)

        var reading = machine(at: start)
        reading.partialRequestBuffered(now: start)
        #expect(reading.shutdownRequested() == .none)
        reading.receive(keepAlive: true)
        #expect(reading.answerHandled(now: start) == true)
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
        state.receive(keepAlive: true)
        #expect(state.shouldRead(bufferedInput: 499))
        #expect(!state.shouldRead(bufferedInput: 500))
    }

    @Test func aPeerThatNeverReadsIsDroppedAfterTheWriteTimeout() {
        var state = machine(at: start)
        state.receive(keepAlive: true)
        #expect(state.answerHandled(now: start) == false)
        state.outputQueued(5000, now: start)
        #expect(state.deadline == start + 30 * second)
        #expect(state.timerFired(now: start + 29 * second) == .none)
        #expect(state.timerFired(now: start + 30 * second) == .abort)
    }

    @Test func aTrickleOfReadsDoesNotMoveTheWriteDeadline() {
        var state = machine(at: start)
        state.receive(keepAlive: true)
        #expect(state.answerHandled(now: start) == false)
        state.outputQueued(5000, now: start)
        for tick in 1...29 {
            #expect(state.outputWritten(10, now: start + UInt64(tick) * second) == .none)
            #expect(state.deadline == start + 30 * second, "after \(tick) trickles")
            #expect(state.timerFired(now: start + UInt64(tick) * second) == .none)
        }
        #expect(state.timerFired(now: start + 30 * second) == .abort)
    }

    @Test func anAnswerWrittenWholeHandsTheClockToTheNextOneFromWhenItWasQueued() {
        var state = machine(at: start)
        state.receive(keepAlive: true)
        #expect(state.answerHandled(now: start) == false)
        state.outputQueued(600, now: start)
        state.receive(keepAlive: true, now: start + 20 * second)
        #expect(state.answerHandled(now: start + 20 * second) == false)
        state.outputQueued(600, now: start + 20 * second)
        #expect(!state.canTakeRequest, "1,200 bytes wait, over the budget of 1,000")
        #expect(state.outputWritten(599, now: start + 25 * second) == .none)
        #expect(state.deadline == start + 30 * second, "the first answer is one byte short")
        #expect(state.outputWritten(1, now: start + 26 * second) == .none)
        #expect(state.deadline == start + 50 * second, "the second answer's clock started when it was queued")
        #expect(state.canTakeRequest)
        #expect(state.timerFired(now: start + 49 * second) == .none)
        #expect(state.outputWritten(600, now: start + 49 * second) == .none)
        #expect(state.deadline == start + 20 * second + 60 * second, "all written: only the idle timeout is left")
        #expect(state.timerFired(now: start + 50 * second) == .none)
    }

    @Test func theWriteTimeoutComesFromTheLimits() {
        var state = ConnectionStateMachine(now: start, timeouts: .init(limits: HTTPLimits(writeTimeout: .seconds(2))))
        #expect(state.outputBudget == 256 * 1024)
        state.outputQueued(10, now: start)
        #expect(state.deadline == start + 2 * second)
        #expect(state.timerFired(now: start + 2 * second) == .abort)
    }

    @Test func aLateTimerAfterTheDeadlineMovedDoesNothing() {
        var state = machine(at: start)
        state.receive(keepAlive: true)
        #expect(state.timerFired(now: start + 3600 * second) == .none)
        #expect(state.answerHandled(now: start + 3600 * second) == false)
        #expect(state.timerFired(now: start + 3601 * second) == .none)
    }

    // MARK: - Requests and their answers

    @Test func anAnswerCarriesItsRequestLineAndTheTimeItsFirstByteArrived() {
        var state = machine(at: start)
        state.requestBytesBuffered(now: start + second)
        state.partialRequestBuffered(now: start + second)
        state.requestBytesBuffered(now: start + 2 * second)  // more of the same request: the start stays
        let head = ConnectionStateMachine.RequestLine(method: "HEAD", target: "/x")
        let request = state.requestReceived(head, isHead: true, version: .http1_0, keepAlive: true, now: start + 3 * second)
        #expect(request.number == 1 && request.started == start + second)
        #expect(state.answerReady(for: 1, now: start + 4 * second) == .write(request: request, closeAfter: false))
        // The next request's clock starts with its own first byte.
        let next = state.requestReceived(getRoot, isHead: false, version: .http1_1, keepAlive: true, now: start + 5 * second)
        #expect(next.number == 2 && next.started == start + 5 * second)
    }

    @Test func anAnswerAfterTheConnectionClosedIsDropped() {
        var state = machine(at: start)
        let number = state.receive(keepAlive: true)
        state.closed()
        #expect(state.answerReady(for: number, now: start) == .drop)
    }

    @Test func aSecondAnswerToTheSameRequestIsDroppedAndTheNextRequestKeepsItsTurn() {
        var state = machine(at: start)
        let first = state.receive(keepAlive: true)
        #expect(state.answerHandled(now: start) == false)
        #expect(state.answerReady(for: first, now: start) == .drop)
        let next = state.receive(keepAlive: true)
        #expect(state.answerReady(for: first, now: start) == .drop)
        #expect(state.isHandling)
        #expect(state.answerReady(for: next, now: start) != .drop)
    }

    @Test func aBodyThatFailsIsLoggedWithItsHeadsRequestLine() {
        var state = machine(at: start)
        state.requestBytesBuffered(now: start)
        let post = ConnectionStateMachine.RequestLine(method: "POST", target: "/upload")
        #expect(state.headReceived(post, now: start, expectsContinue: false) == .none)
        guard case .fail(let failure) = state.timerFired(now: start + 30 * second) else {
            Issue.record("the body timeout did not fail the request")
            return
        }
        #expect(failure == .init(error: .requestTimeout, line: post, started: start))
        #expect(!state.canTakeRequest)
    }

    @Test func aFailureBeforeTheHeadLeavesTheRequestLineToTheParser() {
        var state = machine(at: start)
        state.requestBytesBuffered(now: start + second)
        guard case .fail(let failure) = state.parseFailed(.invalidMethod, now: start + 2 * second) else { return }
        #expect(failure.line == nil && failure.started == start + second)
    }

    @Test func aResumeIsBookedOnceAndOnlyWhenBufferedRequestsCanBeTaken() {
        var state = machine(at: start)
        #expect(state.resumeNeeded(bufferedInput: 0) == false)
        #expect(state.resumeNeeded(bufferedInput: 10) == true)
        #expect(state.resumeNeeded(bufferedInput: 10) == false)  // already booked
        state.resumeStarted()
        state.outputQueued(1000, now: start)  // at the output budget: no request may be taken
        #expect(state.resumeNeeded(bufferedInput: 10) == false)
    }

    @Test func aHeadWhileARequestIsHandledStopsTheProcess() async {
        await #expect(processExitsWith: .failure) {
            var state = ConnectionStateMachine(now: 0, timeouts: .init(limits: HTTPLimits()))
            _ = state.requestReceived(.init(method: "GET", target: "/"), isHead: false, version: .http1_1,
                                      keepAlive: true, now: 0)
            _ = state.headReceived(.init(method: "GET", target: "/"), now: 0, expectsContinue: false)
        }
    }

    @Test func anAnswerForARequestNeverReceivedStopsTheProcess() async {
        await #expect(processExitsWith: .failure) {
            var state = ConnectionStateMachine(now: 0, timeouts: .init(limits: HTTPLimits()))
            _ = state.answerReady(for: 1, now: 0)
        }
    }
}
