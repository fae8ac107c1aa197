import HistoryClient
import Testing

/// The contract's 2 s rule on the client's side, on a clock the test moves.
@Suite("Typing throttle")
struct TypingThrottleTests {
    let start = ContinuousClock.now

    func at(_ seconds: Double) -> ContinuousClock.Instant {
        start + .milliseconds(Int64(seconds * 1000))
    }

    @Test func keystrokesSendATrueEveryFourSeconds() {
        var throttle = TypingThrottle()
        var sent: [Double] = []
        // A keystroke every 300 ms for 10 s, each call answered at once.
        for step in 0...33 {
            let time = Double(step) * 0.3
            if throttle.decide(true, at: at(time)) == .send {
                throttle.didSend(true, at: at(time))
                throttle.didAnswer(at: at(time))
                sent.append(time)
            }
        }
        #expect(sent.count == 3)
        for (earlier, later) in zip(sent, sent.dropFirst()) {
            #expect(later - earlier >= 4 && later - earlier < 4.31)
        }
    }

    @Test func aFalseOnlyAfterATrueAndNeverWithinTwoSeconds() {
        var throttle = TypingThrottle()
        #expect(throttle.decide(false, at: at(0)) == .skip)
        throttle.didSend(true, at: at(0))
        throttle.didAnswer(at: at(0))
        #expect(throttle.decide(false, at: at(0.5)) == .wait(.milliseconds(1500)))
        #expect(throttle.decide(false, at: at(2)) == .send)
        throttle.didSend(false, at: at(2))
        throttle.didAnswer(at: at(2))
        #expect(throttle.decide(false, at: at(3)) == .skip)
        // Typing again 1 s after the false: wait out the server's quiet period.
        #expect(throttle.decide(true, at: at(3)) == .wait(.seconds(1)))
        #expect(throttle.decide(true, at: at(4)) == .send)
    }

    /// The server counts its 2 s from when it accepted the `true`, which
    /// may be as late as its answer: a `false` 2 s after the send but
    /// 0.5 s after a slow answer would be dropped, and the others would
    /// see this user typing for the rest of the 6 s.
    @Test func aFalseWaitsTwoSecondsFromTheAnswerNotFromTheSend() {
        var throttle = TypingThrottle()
        throttle.didSend(true, at: at(0))
        // The answer is not in: the server may not even have the call yet.
        #expect(throttle.decide(false, at: at(1)) == .wait(.seconds(2)))
        #expect(throttle.decide(false, at: at(2.5)) == .wait(.seconds(2)))
        // The true is shown or about to be: nothing to repeat.
        #expect(throttle.decide(true, at: at(1)) == .skip)
        throttle.didAnswer(at: at(1.5))
        #expect(throttle.decide(false, at: at(2)) == .wait(.milliseconds(1500)))
        #expect(throttle.decide(false, at: at(3.4)) == .wait(.milliseconds(100)))
        #expect(throttle.decide(false, at: at(3.5)) == .send)
    }

    /// A renewal 4 s after the send waits for 2 s after a slow answer too.
    @Test func aRenewalWaitsTwoSecondsFromASlowAnswer() {
        var throttle = TypingThrottle()
        throttle.didSend(true, at: at(0))
        throttle.didAnswer(at: at(3))
        #expect(throttle.decide(true, at: at(3.5)) == .skip)
        #expect(throttle.decide(true, at: at(4)) == .wait(.seconds(1)))
        #expect(throttle.decide(true, at: at(5)) == .send)
    }

    /// A call the server refused (a 4xx) changed nothing there: forgotten.
    @Test func aRefusedSendIsForgotten() {
        var throttle = TypingThrottle()
        let before = throttle
        throttle.didSend(true, at: at(0))
        throttle.restore(before)
        #expect(throttle.decide(true, at: at(0.1)) == .send)
        #expect(throttle.decide(false, at: at(0.1)) == .skip)
    }

    /// A `true` whose answer never came may have been accepted, as late as
    /// the failure: the `false` that follows is sent (not skipped as if
    /// nothing were shown), 2 s after the failure; and a `true` is due
    /// again, since it may not be shown.
    @Test func aTrueWithoutAnAnswerIsFollowedByAFalse() {
        var throttle = TypingThrottle()
        throttle.didSend(true, at: at(0))
        throttle.didLoseAnswer(at: at(15))
        #expect(throttle.decide(false, at: at(15.5)) == .wait(.milliseconds(1500)))
        #expect(throttle.decide(false, at: at(17)) == .send)
        #expect(throttle.decide(true, at: at(16)) == .wait(.seconds(1)))
        #expect(throttle.decide(true, at: at(17)) == .send)
    }

    /// A `false` whose answer never came may have been dropped or never
    /// arrived: the server may still show the `true`, so the next `false`
    /// is sent again, 2 s after the failure.
    @Test func aFalseWithoutAnAnswerIsSentAgain() {
        var throttle = TypingThrottle()
        throttle.didSend(true, at: at(0))
        throttle.didAnswer(at: at(0))
        throttle.didSend(false, at: at(2))
        throttle.didLoseAnswer(at: at(3))
        #expect(throttle.decide(false, at: at(4)) == .wait(.seconds(1)))
        #expect(throttle.decide(false, at: at(5)) == .send)
    }
}
