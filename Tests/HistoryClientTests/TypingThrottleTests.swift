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
        // A keystroke every 300 ms for 10 s.
        for step in 0...33 {
            let time = Double(step) * 0.3
            if throttle.decide(true, at: at(time)) == .send {
                throttle.didSend(true, at: at(time))
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
        #expect(throttle.decide(false, at: at(0.5)) == .wait(.milliseconds(1500)))
        #expect(throttle.decide(false, at: at(2)) == .send)
        throttle.didSend(false, at: at(2))
        #expect(throttle.decide(false, at: at(3)) == .skip)
        // Typing again 1 s after the false: wait out the server's quiet period.
        #expect(throttle.decide(true, at: at(3)) == .wait(.seconds(1)))
        #expect(throttle.decide(true, at: at(4)) == .send)
    }

    @Test func aFailedSendIsForgotten() {
        var throttle = TypingThrottle()
        let before = throttle
        throttle.didSend(true, at: at(0))
        throttle.restore(before)
        #expect(throttle.decide(true, at: at(0.1)) == .send)
    }
}
