import HistoryTestSupport
import Testing
@testable import HistoryStore

/// Long-polls of the user feed. "Not woken" is shown without a clock: the
/// store answers a batch's callers, then wakes its waits, on one serial
/// queue, so once a later write was answered the earlier batch's wake-ups
/// have run, and a wait still parked then was not woken by it.
@Suite("Waiting for inbox changes", .postgresCluster)
struct InboxWaitTests {
    /// A parked inbox wait whose outcome the test can look at. Its timeout
    /// is an hour unless a test asks for one: in a full parallel run on two
    /// cores a test can be held for over a minute between two steps, and a
    /// wait that timed out meanwhile would read as a wrong outcome.
    final class ParkedWait: Sendable {
        let outcome = Locked<WaitOutcome?>(nil)
        let token: Locked<WaitToken?> = Locked(nil)

        init(_ store: any HistoryStore, user: String, after activity: Int64, timeout: Duration = .seconds(3600)) {
            let token = store.waitForInboxChange(of: uid(user), after: activity, timeout: timeout) { [outcome] result in
                outcome.withLock { $0 = result }
            }
            self.token.withLock { $0 = token }
        }

        func ended() async -> WaitOutcome? {
            _ = await eventually { outcome.value != nil }
            return outcome.value
        }
    }

    private func activity(_ store: any HistoryStore) throws -> Int64 {
        try store.inbox(of: uid("nobody"), InboxQuery()).activity
    }

    /// Makes sure every earlier batch's wake-ups have run (see the suite's note).
    private func settle(_ store: any HistoryStore) async throws {
        if (try? store.conversation(cid("settle"))) == nil { try await store.make("settle") }
        try await store.post(1, to: "settle")
    }

    @Test(arguments: StoreBackend.allCases) func aPostInOneOfTheUsersConversationsWakesItAndOneElsewhereDoesNot(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("mine", owner: "ana")
            try await store.make("theirs", owner: "bob")
            let wait = ParkedWait(store, user: "ana", after: try activity(store))
            #expect(store.parkedWaitCount == 1)
            try await store.post(3, to: "theirs", sender: "bob")
            try await settle(store)
            #expect(store.parkedWaitCount == 1)
            #expect(wait.outcome.value == nil, "a post in another conversation does not wake it")
            try await store.post(1, to: "mine", sender: "bob")
            #expect(await wait.ended() == .changed)
            #expect(store.parkedWaitCount == 0)
        }
    }

    @Test(arguments: StoreBackend.allCases) func membershipsAndTheUsersOwnMarkerWakeIt(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("room", owner: "ana")
            try await store.putMember(uid("bob"), in: cid("room"))
            try await store.post(2, to: "room", sender: "cy")

            // Another member's marker is that member's business.
            var wait = ParkedWait(store, user: "ana", after: try activity(store))
            _ = try await store.markRead(uid("bob"), in: cid("room"), upTo: .max)
            try await settle(store)
            #expect(wait.outcome.value == nil)
            // The user's own marker, from another device.
            _ = try await store.markRead(uid("ana"), in: cid("room"), upTo: .max)
            #expect(await wait.ended() == .changed)

            // Added to a conversation it was not watching.
            try await store.make("new")
            wait = ParkedWait(store, user: "ana", after: try activity(store))
            try await store.putMember(uid("ana"), in: cid("new"))
            #expect(await wait.ended() == .changed)

            // Removed.
            wait = ParkedWait(store, user: "ana", after: try activity(store))
            #expect(try await store.removeMember(uid("ana"), from: cid("room")))
            #expect(await wait.ended() == .changed)

            // And no longer woken by the conversation it left.
            wait = ParkedWait(store, user: "ana", after: try activity(store))
            try await store.post(1, to: "room", sender: "cy")
            try await settle(store)
            #expect(wait.outcome.value == nil)
            // A member list change reaches the other members.
            let bobs = ParkedWait(store, user: "bob", after: try activity(store))
            try await store.putMember(uid("dee"), in: cid("room"))
            #expect(await bobs.ended() == .changed)
            #expect(wait.outcome.value == nil)
            store.cancelWait(wait.token.value!)
            #expect(await wait.ended() == .cancelled)
        }
    }

    @Test(arguments: StoreBackend.allCases) func aFeedAlreadyPastAnswersAtOnceButOtherUsersChangesDoNot(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("mine", owner: "ana")
            try await store.make("other")
            let start = try activity(store)
            try await store.post(2, to: "other")
            // The counter moved, but nothing of ana's: it parks.
            let parked = ParkedWait(store, user: "ana", after: start)
            #expect(store.parkedWaitCount == 1)
            #expect(parked.outcome.value == nil)
            try await store.post(1, to: "mine")
            #expect(await parked.ended() == .changed)
            // Something of ana's after `start` already: at once.
            let atOnce = ParkedWait(store, user: "ana", after: start)
            #expect(await atOnce.ended() == .changed)
            #expect(store.parkedWaitCount == 0)
        }
    }

    @Test(arguments: StoreBackend.allCases) func bothKindsOfWaitsAreCountedCancelledAndClosed(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("room", owner: "ana")
            let inbox = ParkedWait(store, user: "ana", after: try activity(store))
            let conversationOutcome = Locked<WaitOutcome?>(nil)
            let conversationToken = store.waitForChange(in: cid("room"), after: 0, timeout: .seconds(3600)) { result in
                conversationOutcome.withLock { $0 = result }
            }
            let other = ParkedWait(store, user: "bob", after: try activity(store))
            #expect(store.parkedWaitCount == 3)
            #expect(inbox.token.value != conversationToken, "the two kinds never share a token")
            store.cancelWait(other.token.value!)
            #expect(await other.ended() == .cancelled)
            #expect(store.parkedWaitCount == 2)
            #expect(await ParkedWait(store, user: "ana", after: 0).ended() == .changed)
            #expect(await ParkedWait(store, user: "cy", after: 0, timeout: .milliseconds(1)).ended() == .timedOut)
            store.close()
            #expect(await inbox.ended() == .closing)
            #expect(await eventually { conversationOutcome.value == .closing })
            #expect(await ParkedWait(store, user: "ana", after: 0).ended() == .closing)
            #expect(store.parkedWaitCount == 0)
        }
    }

    /// A user with more conversations than a wait registers under is woken
    /// by every commit (a spurious wake costs one feed read); one with fewer
    /// only by its own conversations and by changes to itself.
    @Test func aUserWithTooManyConversationsWatchesEveryCommit() async {
        let waiters = Waiters()
        let outcomes = Locked<[String: WaitOutcome]>([:])
        func park(_ user: String, conversations: Int) {
            _ = waiters.wait(for: .inbox(uid(user), after: 10), timeout: .seconds(600),
                             lookups: ScriptedLookups(memberships: { (0..<Int64(conversations)).map { $0 + 1 } },
                                                      hasChanges: { false })) { outcome in
                outcomes.withLock { $0[user] = outcome }
            }
        }
        park("many", conversations: Waiters.membershipCap + 1)
        park("few", conversations: 3)
        park("self", conversations: 3)
        #expect(waiters.parkedCount == 3)
        waiters.publish([.activity(11, conversations: [1_000_000], users: [])])
        #expect(waiters.parkedCount == 2, "only the one watching everything was woken")
        waiters.publish([.activity(10, conversations: [2], users: [])])
        #expect(waiters.parkedCount == 2, "a commit at or before the wait's activity wakes nothing")
        waiters.publish([.activity(12, conversations: [], users: ["self"])])
        #expect(waiters.parkedCount == 1)
        waiters.publish([.activity(13, conversations: [2], users: [])])
        #expect(waiters.parkedCount == 0)
        #expect(await eventually { outcomes.value == ["many": .changed, "few": .changed, "self": .changed] })
        waiters.close()
    }

    // MARK: - Parking again

    /// A woken user parks again at once (the client's next poll): her
    /// conversations are read once and kept until a commit changes her, and
    /// the feed is looked at only when a commit after the wait's activity
    /// was published before it parked.
    @Test func parkingAgainReadsNothingUntilTheUserChanges() async {
        let waiters = Waiters(publishedActivity: 10)
        let reads = Locked(0)
        let looks = Locked(0)
        let outcomes = Locked<[WaitOutcome]>([])
        func park(after activity: Int64) {
            _ = waiters.wait(for: .inbox(uid("ana"), after: activity), timeout: .seconds(600),
                             lookups: ScriptedLookups(memberships: { reads.withLock { $0 += 1 }; return [1, 2] },
                                                      hasChanges: { looks.withLock { $0 += 1 }; return false })) { outcome in
                outcomes.withLock { $0.append(outcome) }
            }
        }
        park(after: 10)
        #expect(reads.value == 1)
        #expect(looks.value == 0, "parked at the last published activity: nothing to look at")
        waiters.publish([.activity(11, conversations: [3], users: [])])
        #expect(waiters.parkedCount == 1, "not one of her conversations")
        waiters.publish([.activity(12, conversations: [2], users: [])])
        #expect(waiters.parkedCount == 0)

        park(after: 11)
        #expect(reads.value == 1, "her conversations were kept")
        #expect(looks.value == 1, "12 was published after 11: it looks")
        waiters.publish([.activity(13, conversations: [3], users: [])])
        #expect(waiters.parkedCount == 1, "the kept conversations still filter")
        waiters.publish([.activity(14, conversations: [1], users: [])])
        #expect(waiters.parkedCount == 0)

        // A commit changing her (a membership, a marker) drops what was kept.
        park(after: 14)
        waiters.publish([.activity(15, conversations: [], users: ["ana"])])
        #expect(waiters.parkedCount == 0)
        park(after: 15)
        #expect(reads.value == 2)
        #expect(looks.value == 1)
        waiters.close()
        #expect(await eventually { outcomes.value.count == 4 })
        #expect(outcomes.value.filter { $0 == .changed }.count == 3)
    }

    /// A read of her conversations that a commit changing her overtook
    /// serves that wait (the commit wakes it) but is not kept.
    @Test func aMembershipReadOvertakenByACommitIsNotKept() {
        let waiters = Waiters(publishedActivity: 10)
        let reads = Locked(0)
        func park(after activity: Int64) -> WaitToken {
            waiters.wait(for: .inbox(uid("ana"), after: activity), timeout: .seconds(600),
                         lookups: ScriptedLookups(memberships: {
                             let read = reads.withLock { $0 += 1; return $0 }
                             // The commit lands while the old seqs are on their way.
                             if read == 1 { waiters.publish([.activity(11, conversations: [], users: ["ana"])]) }
                             return [1]
                         },
                         hasChanges: { false })) { _ in }
        }
        _ = park(after: 10)
        #expect(waiters.parkedCount == 0, "the commit woke it")
        waiters.cancel(park(after: 11))
        #expect(reads.value == 2, "the overtaken read was not kept")
        waiters.cancel(park(after: 11))
        #expect(reads.value == 2, "the second one was")
        waiters.close()
    }

    /// Another instance's commit changing her reaches this one a moment
    /// after her client saw it: a wait parked in between, past that commit,
    /// on the conversations kept from before, is woken by its publication
    /// (they may lack the one she just joined); a wait that read her
    /// conversations afresh is not.
    @Test func aLatePublicationOfHerChangeWakesAWaitOnKeptConversationsOnly() async {
        let waiters = Waiters()
        let reads = Locked(0)
        let outcomes = Locked<[WaitOutcome]>([])
        func park(after activity: Int64) -> WaitToken {
            waiters.wait(for: .inbox(uid("ana"), after: activity), timeout: .seconds(3600),
                         lookups: ScriptedLookups(memberships: { reads.withLock { $0 += 1; return $0 == 1 ? [1] : [1, 2] } },
                                                  hasChanges: { false })) { outcome in outcomes.withLock { $0.append(outcome) } }
        }
        waiters.cancel(park(after: 10))
        #expect(reads.value == 1)
        _ = park(after: 20)
        #expect(reads.value == 1, "her conversations were kept")
        // She joined conversation 2 at activity 15 through the other instance.
        waiters.publish([.activity(15, conversations: [2], users: ["ana"])])
        #expect(waiters.parkedCount == 0, "woken: the kept conversations predate her change")

        _ = park(after: 20)
        #expect(reads.value == 2, "read afresh after her change")
        waiters.publish([.activity(15, conversations: [2], users: ["ana"])])
        #expect(waiters.parkedCount == 1, "a wait on fresh conversations is not woken by an old change")
        waiters.publish([.activity(21, conversations: [2], users: [])])
        #expect(waiters.parkedCount == 0)
        // Handlers run on a concurrent queue: the three outcomes, in any order.
        #expect(await eventually {
            let seen = outcomes.value
            return seen.count == 3 && seen.filter { $0 == .changed }.count == 2 && seen.contains(.cancelled)
        })
        waiters.close()
    }

    /// Without a published activity (a store that does not promise to
    /// publish every commit), every wait looks at the feed.
    @Test func withoutAPublishedActivityEveryWaitLooks() {
        let waiters = Waiters()
        let looks = Locked(0)
        for _ in 0..<2 {
            let token = waiters.wait(for: .inbox(uid("ana"), after: 10), timeout: .seconds(600),
                                     lookups: ScriptedLookups(memberships: { [1] },
                                                              hasChanges: { looks.withLock { $0 += 1 }; return false })) { _ in }
            waiters.cancel(token)
        }
        #expect(looks.value == 2)
        waiters.close()
    }

    /// Memberships that change while the user is not parked (between two
    /// polls) are what her next wait follows: the conversation she joined
    /// wakes it, the one she left does not.
    @Test func membershipsChangedBetweenPollsAreFollowed() async throws {
        try await withTemporaryStore { store in
            try await store.make("left", owner: "ana")
            try await store.make("joined", owner: "bob")
            let first = ParkedWait(store, user: "ana", after: try activity(store))
            try await store.post(1, to: "left", sender: "bob")
            #expect(await first.ended() == .changed)

            try await store.putMember(uid("ana"), in: cid("joined"))
            #expect(try await store.removeMember(uid("ana"), from: cid("left")))
            let second = ParkedWait(store, user: "ana", after: try activity(store))
            try await store.post(1, to: "left", sender: "bob")
            try await settle(store)
            #expect(second.outcome.value == nil, "she left it")
            try await store.post(1, to: "joined", sender: "bob")
            #expect(await second.ended() == .changed)

            // And parked again with nothing changed about her: the same.
            let third = ParkedWait(store, user: "ana", after: try activity(store))
            try await store.post(1, to: "left", sender: "bob")
            try await settle(store)
            #expect(third.outcome.value == nil)
            try await store.post(1, to: "joined", sender: "bob")
            #expect(await third.ended() == .changed)
        }
    }
}

/// The reads an inbox wait makes, scripted: the tests count them and
/// choose their answers (no wait of another kind parks with them).
private struct ScriptedLookups: WaitLookups {
    let memberships: () -> [Int64]?
    let hasChanges: () -> Bool?

    func version(of conversation: ConversationID) -> Int64? { nil }
    func activity() -> Int64? { nil }
    func membershipSeqs(of user: UserID, limit: Int) -> [Int64]? { memberships() }
    func hasInboxChanges(of user: UserID, after activity: Int64) -> Bool? { hasChanges() }
}
