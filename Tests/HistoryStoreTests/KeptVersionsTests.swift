import Dispatch
import HistoryTestSupport
import Synchronization
import Testing
@testable import HistoryStore
@testable import HistorySQLite

/// `KeptVersions`: each conversation's committed version in memory, for
/// 304s without a read. A kept version may be ahead of the file (a mark
/// before COMMIT) but never behind a commit a caller was answered.
@Suite("Kept versions")
struct KeptVersionsTests {
    // MARK: - The rules, alone

    @Test func aReadOvertakenByAMarkIsNotKept() {
        let kept = KeptVersions()
        let ticket = kept.ticket()
        kept.willCommit([(cid("c"), Int64(6))])
        kept.learn(5, of: cid("c"), ticket: ticket)
        #expect(kept.version(of: cid("c")) == 6)

        // A mark of another conversation overtakes every read under way.
        let before = kept.ticket()
        kept.willCommit([(cid("d"), Int64(1))])
        kept.learn(3, of: cid("e"), ticket: before)
        #expect(kept.version(of: cid("e")) == nil)
        kept.learn(3, of: cid("e"), ticket: kept.ticket())
        #expect(kept.version(of: cid("e")) == 3)
    }

    @Test func onlyTheWriterReplacesAKeptVersionAndNeverLowersIt() {
        let kept = KeptVersions()
        kept.learn(4, of: cid("c"), ticket: kept.ticket())
        kept.learn(2, of: cid("c"), ticket: kept.ticket())
        kept.learn(9, of: cid("c"), ticket: kept.ticket())
        #expect(kept.version(of: cid("c")) == 4)
        kept.willCommit([(cid("c"), Int64(7))])
        kept.willCommit([(cid("c"), Int64(6))])
        #expect(kept.version(of: cid("c")) == 7)
    }

    @Test func aFailedBatchForgetsEverythingAndEveryReadUnderWay() throws {
        let kept = KeptVersions()
        kept.willCommit([(cid("c"), Int64(7)), (cid("d"), Int64(2))])
        let ticket = kept.ticket()
        kept.forgetAll()
        #expect(kept.version(of: cid("c")) == nil && kept.version(of: cid("d")) == nil)
        kept.learn(6, of: cid("c"), ticket: ticket)
        #expect(kept.version(of: cid("c")) == nil)

        struct Failed: Error {}
        kept.willCommit([(cid("c"), Int64(8))])
        #expect(throws: Failed.self) { try kept.forgottenOnFailure { () throws(Failed) in throw Failed() } }
        #expect(kept.version(of: cid("c")) == nil)
    }

    /// Full, reads teach nothing more; the writer's next mark starts over
    /// and keeps its own versions.
    @Test func itIsBoundedAndOnlyTheWriterStartsOver() {
        let kept = KeptVersions(capacity: 2)
        kept.learn(1, of: cid("a"), ticket: kept.ticket())
        kept.learn(1, of: cid("b"), ticket: kept.ticket())
        kept.learn(1, of: cid("c"), ticket: kept.ticket())
        #expect(kept.count == 2 && kept.version(of: cid("c")) == nil)
        kept.willCommit([(cid("d"), Int64(5))])
        #expect(kept.count == 1 && kept.version(of: cid("d")) == 5 && kept.version(of: cid("a")) == nil)
    }

    /// A committed membership change drops the conversation's roles and
    /// every read under way; other conversations keep theirs.
    @Test func aMembershipChangeForgetsTheConversationsRoles() {
        let kept = KeptVersions()
        let bob = UserID("bob")!
        kept.learn(.member, of: bob, in: cid("c"), ticket: kept.ticket())
        kept.learn(.owner, of: bob, in: cid("d"), ticket: kept.ticket())
        #expect(kept.role(of: bob, in: cid("c")) == .member)
        let ticket = kept.ticket()
        kept.committed(membershipsOf: [cid("c")])
        #expect(kept.role(of: bob, in: cid("c")) == nil)
        #expect(kept.role(of: bob, in: cid("d")) == .owner)
        kept.learn(.member, of: bob, in: cid("c"), ticket: ticket)
        #expect(kept.role(of: bob, in: cid("c")) == nil)
        kept.forgetAll()
        #expect(kept.role(of: bob, in: cid("d")) == nil)
    }

    // MARK: - The SQLite store

    /// Every write's version is known before its caller is answered, and
    /// equals what a read sees once answered; a read teaches the version
    /// of a conversation nothing wrote since the store opened.
    @Test func everyAnsweredWriteIsKnownBeforeItsAnswer() async throws {
        try await withTemporaryStore { store in
            try await store.make("c")
            try await store.make("quiet")
            #expect(store.knownVersion(of: cid("quiet")) == nil)
            let quiet = try store.conversation(cid("quiet"))
            #expect(store.knownVersion(of: cid("quiet")) == quiet.version)

            let behind = Mutex<[String]>([])
            let done = DispatchGroup()
            @Sendable func check(_ what: String, _ result: Result<Message, StoreError>) {
                defer { done.leave() }
                guard case .success(let message) = result else { return behind.withLock { $0.append("\(what) failed") } }
                let known = store.knownVersion(of: cid("c"))
                if known == nil || known! < message.version {
                    behind.withLock { $0.append("\(what): known \(String(describing: known)), answered \(message.version)") }
                }
            }
            let posted = try await store.post(3, to: "c")
            for (index, message) in posted.enumerated() {
                done.enter()
                store.append(NewMessage(sender: "ana", body: "more \(index)"), to: cid("c")) { result in
                    check("append", result.map(\.message))
                }
                done.enter()
                store.edit(messageID: message.id, in: cid("c"), body: "edited") { check("edit", $0) }
                done.enter()
                store.delete(messageID: message.id, in: cid("c")) { check("delete", $0) }
            }
            done.wait()
            #expect(behind.withLock { $0 }.isEmpty, "\(behind.withLock { $0 })")
            #expect(store.knownVersion(of: cid("c")) == (try store.conversation(cid("c"))).version)

            let loaded = try store.seed(10, to: "c")
            #expect(loaded.count == 10)
            #expect(store.knownVersion(of: cid("c")) == (try store.conversation(cid("c"))).version)
        }
    }

    /// A batch whose transaction cannot begin (another connection holds
    /// the write lock) is answered `.storage` and leaves nothing kept; the
    /// next commits are kept again.
    @Test func aFailedBatchLeavesNothingKept() async throws {
        try await withTemporaryDirectory { directory in
            let store = try SQLiteHistoryStore(configuration: SQLiteStoreConfiguration(
                path: directory.databasePath, durability: .normal, busyTimeoutMilliseconds: 20))
            defer { store.close() }
            try await store.make("c")
            try await store.post(2, to: "c")
            #expect(store.knownVersion(of: cid("c")) != nil)

            let blocker = try SQLiteConnection(path: directory.databasePath)
            try blocker.execute(sql: "BEGIN IMMEDIATE")
            await #expect(throws: StoreError.self) {
                _ = try await store.append(NewMessage(sender: "ana", body: "blocked"), to: cid("c"))
            }
            #expect(store.knownVersion(of: cid("c")) == nil)
            try blocker.execute(sql: "ROLLBACK")
            blocker.close()

            let after = try await store.append(NewMessage(sender: "ana", body: "again"), to: cid("c")).message
            #expect(store.knownVersion(of: cid("c")) == after.version)

            // A member's role is kept from a read of the conversation as that
            // member, and dropped when its membership changes.
            let bob = UserID("bob")!
            try await store.putMember(bob, in: cid("c"))
            let asBob = AccessCheck(user: bob) { role, _ in role == nil ? .notAMember : nil }
            _ = try store.conversation(cid("c"), access: asBob)
            #expect(store.knownRole(of: bob, in: cid("c")) == .member)
            try await store.putMember(bob, role: .owner, in: cid("c"))
            #expect(store.knownRole(of: bob, in: cid("c")) == nil)
            _ = try store.conversation(cid("c"), access: asBob)
            #expect(store.knownRole(of: bob, in: cid("c")) == .owner)
            #expect(try await store.removeMember(bob, from: cid("c")))
            #expect(store.knownRole(of: bob, in: cid("c")) == nil)
            #expect(throws: StoreError.self) { try store.conversation(cid("c"), access: asBob) }
            #expect(store.knownRole(of: bob, in: cid("c")) == nil)
            #expect(try store.conversation(cid("c")).version == after.version)
        }
    }
}
