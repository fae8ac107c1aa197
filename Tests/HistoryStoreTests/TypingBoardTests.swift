import HistoryStore
import HistoryTestSupport
import Synchronization
import Testing

/// The typing board's rules on a clock the test moves (`now:`): the 2 s
/// rule, expiry by sweep, the caps, what another instance's calls do, and
/// the observers' view of every change.
@Suite("Typing board")
struct TypingBoardTests {
    private let room = ConversationID("room")!
    private let ana = UserID("ana")!, bo = UserID("bo")!
    private let start = ContinuousClock.now

    private func at(_ milliseconds: Int) -> ContinuousClock.Instant { start + .milliseconds(milliseconds) }

    @Test func theQuietPeriodDropsCallsAndTheSweepExpiresTypers() {
        let board = TypingBoard()
        defer { board.close() }
        #expect(board.tell(true, user: ana, in: room, now: at(0)) == .accepted)
        #expect(board.tell(false, user: ana, in: room, now: at(1_999)) == .tooSoon)
        #expect(board.typers(in: room, now: at(1_999)) == [ana])
        #expect(board.tell(true, user: ana, in: room, now: at(2_000)) == .accepted)
        // Renewed at 2 s: shown until 8 s, gone after, and swept.
        #expect(board.typers(in: room, now: at(7_999)) == [ana])
        #expect(board.typers(in: room, now: at(8_000)) == [])
        board.sweep(now: at(8_000))
        #expect(board.entryCount == 0)
        // A stop of someone not typing changes nothing and is not remembered.
        #expect(board.tell(false, user: bo, in: room, now: at(8_000)) == .unchanged)
        #expect(board.entryCount == 0)
    }

    @Test func aStopIsRememberedForItsQuietPeriodOnly() {
        let board = TypingBoard()
        defer { board.close() }
        board.tell(true, user: ana, in: room, now: at(0))
        #expect(board.tell(false, user: ana, in: room, now: at(2_500)) == .accepted)
        #expect(board.typers(in: room, now: at(2_500)) == [])
        board.sweep(now: at(4_000))
        #expect(board.entryCount == 1)
        #expect(board.tell(true, user: ana, in: room, now: at(4_000)) == .tooSoon)
        board.sweep(now: at(4_500))
        #expect(board.entryCount == 0)
    }

    @Test func theCapsBoundTheBoard() {
        let board = TypingBoard(timing: TypingTiming(maximumPerConversation: 2, maximumEntries: 3))
        defer { board.close() }
        let users = (0..<5).map { UserID("u\($0)")! }
        let outcomes = users.map { board.tell(true, user: $0, in: room, now: at(0)) }
        #expect(outcomes == [.accepted, .accepted, .full, .full, .full])
        let other = ConversationID("other")!
        #expect(users.map { board.tell(true, user: $0, in: other, now: at(0)) } == [.accepted, .full, .full, .full, .full])
        #expect(board.entryCount == 3)
        board.hear(TypingChange(conversation: ConversationID("third")!, user: ana, typing: true), now: at(0))
        #expect(board.entryCount == 3)
        board.sweep(now: at(10_000))
        #expect(board.entryCount == 0)
    }

    /// On the real clock, with the board's own sweeps. 3 s to last: the
    /// three calls below must all land before bo's typing runs out, even
    /// when a loaded machine pauses this thread for a second or two.
    @Test(.timeLimit(.minutes(1)))
    func observersSeeEveryChangeInOrderAndHeardCallsExpireHere() async {
        let board = TypingBoard(timing: TypingTiming(lasts: .seconds(3), quietPeriod: .milliseconds(50)))
        defer { board.close() }
        let seen = Mutex<[[UserID]]>([])
        let observation = board.observe(room) { typers in seen.withLock { $0.append(typers) } }
        board.tell(true, user: bo, in: room)
        board.hear(TypingChange(conversation: room, user: ana, typing: true))
        // A renewal changes no list: no call.
        board.hear(TypingChange(conversation: room, user: ana, typing: true))
        // Both expire by the board's own sweep.
        #expect(await eventually { seen.withLock { $0.last } == [] })
        board.stopObserving(observation)
        board.tell(true, user: ana, in: ConversationID("other")!)
        let calls = seen.withLock { $0 }
        #expect(calls.first == [bo] && calls.dropFirst().first == [ana, bo])
        #expect(calls.count == 3 || calls.count == 4)
        #expect(board.observerCount == 0)
    }
}
