import HistoryTestSupport
import Testing
@testable import HistoryStore

/// The one wait table, with waits of every kind parked side by side: a
/// publication wakes the waits its data concerns and no others, and
/// tokens, cancellation, timeouts and closing work alike for every kind.
@Suite("One table for every wait")
struct WaitersTests {
    /// Lookups that know nothing: every wait relies on publications alone.
    private struct Blind: WaitLookups {
        func version(of conversation: ConversationID) -> Int64? { nil }
        func activity() -> Int64? { nil }
        func membershipSeqs(of user: UserID, limit: Int) -> [Int64]? { [7] }
        func hasInboxChanges(of user: UserID, after activity: Int64) -> Bool? { false }
    }

    private func park(_ waiters: Waiters, _ interest: WaitInterest, _ name: String,
                      into outcomes: Locked<[String: WaitOutcome]>, timeout: Duration = .seconds(3600)) -> WaitToken {
        waiters.wait(for: interest, timeout: timeout, lookups: Blind()) { outcome in
            outcomes.withLock { $0[name] = outcome }
        }
    }

    @Test func aPublicationWakesOnlyTheWaitsItsDataConcerns() async {
        let waiters = Waiters()
        let outcomes = Locked<[String: WaitOutcome]>([:])
        _ = park(waiters, .conversation(cid("a"), after: 5, ids: nil), "a", into: outcomes)
        _ = park(waiters, .conversation(cid("b"), after: 5, ids: nil), "b", into: outcomes)
        _ = park(waiters, .conversation(cid("a"), after: 5, ids: 1...3), "a 1...3", into: outcomes)
        _ = park(waiters, .inbox(uid("ana"), after: 20), "ana", into: outcomes)
        _ = park(waiters, .server(after: 20), "server", into: outcomes)
        #expect(waiters.parkedCount == 5)

        waiters.publish([.version(cid("a"), 6, changed: ChangedMessageIDs([9]))])
        #expect(waiters.parkedCount == 4, "only a's unfiltered wait: 9 is not in 1...3")
        waiters.publish([.activity(21, conversations: [8], users: [])])
        #expect(waiters.parkedCount == 3, "the server wait; ana is not in conversation 8")
        waiters.publish([.version(cid("b"), 5, changed: nil), .activity(22, conversations: [7], users: [])])
        #expect(waiters.parkedCount == 2, "ana's conversation 7; b's wait is past version 5")
        waiters.publish([.version(cid("a"), 7, changed: ChangedMessageIDs([2])), .version(cid("b"), 6, changed: nil)])
        #expect(waiters.parkedCount == 0)
        #expect(await eventually { outcomes.value.count == 5 && outcomes.value.values.allSatisfy { $0 == .changed } })
        waiters.close()
    }

    @Test func tokensTimeoutsWakeAllAndClosingWorkForEveryKind() async {
        let waiters = Waiters()
        let outcomes = Locked<[String: WaitOutcome]>([:])
        let tokens = [
            park(waiters, .conversation(cid("a"), after: 0, ids: nil), "a", into: outcomes),
            park(waiters, .inbox(uid("ana"), after: 0), "ana", into: outcomes),
            park(waiters, .server(after: 0), "server", into: outcomes),
        ]
        #expect(Set(tokens).count == 3, "one token space for every kind")
        for token in tokens { waiters.cancel(token) }
        #expect(waiters.parkedCount == 0)
        #expect(await eventually { outcomes.value == ["a": .cancelled, "ana": .cancelled, "server": .cancelled] })

        _ = park(waiters, .server(after: 0), "quick", into: outcomes, timeout: .zero)
        #expect(await eventually { outcomes.value["quick"] == .timedOut })

        let observed = Locked<[Set<UserID>?]>([])
        waiters.observeUserChanges { users in observed.withLock { $0.append(users) } }
        _ = park(waiters, .conversation(cid("a"), after: 0, ids: nil), "woken", into: outcomes)
        waiters.wakeAll()
        #expect(await eventually { outcomes.value["woken"] == .changed })
        waiters.publish([.activity(1, conversations: [], users: ["bob"])])
        #expect(observed.value == [nil, [uid("bob")]])

        _ = park(waiters, .inbox(uid("ana"), after: 0), "parked", into: outcomes)
        waiters.close()
        #expect(outcomes.value["parked"] == .closing, "close returns once the handlers ran")
        _ = park(waiters, .server(after: 0), "late", into: outcomes)
        #expect(await eventually { outcomes.value["late"] == .closing })
    }
}
