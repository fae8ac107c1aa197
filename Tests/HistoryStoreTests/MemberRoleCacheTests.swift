import Foundation
import HistoryTestSupport
import Testing
@testable import HistorySQLite
@testable import HistoryStore

/// The SQLite readers' role cache (`SQLiteMemberRoleCache`): a role a
/// reader remembered must never outlive a membership change. Every reader
/// of the pool is made to hold the role at once (a barrier inside the access
/// decision keeps each read on its own connection), then the membership
/// changes, and every reader must see the change in its next snapshot.
@Suite("Member role cache")
struct MemberRoleCacheTests {
    private static let readerCount = 4

    private func uid(_ text: String) -> UserID {
        UserID(text)!
    }

    @Test func everyReaderSeesARemovalARoleChangeAndAReturn() async throws {
        try await withCachingStore { store in
            _ = try await store.createConversation(id: cid("room"), title: nil, owner: uid("owner"))
            try await store.putMember(uid("ana"), in: cid("room"))
            // Two rounds: the first teaches each reader the conversation's
            // seq, the second reads (and caches) the role under the seq.
            for _ in 0..<2 {
                #expect(try rolesOnEveryReader(store, of: uid("ana"), in: "room") == Array(repeating: .member, count: Self.readerCount))
            }

            #expect(try await store.removeMember(uid("ana"), from: cid("room")))
            #expect(try rolesOnEveryReader(store, of: uid("ana"), in: "room") == Array(repeating: nil, count: Self.readerCount),
                    "a removed member is refused by every reader, whatever it cached")

            try await store.putMember(uid("ana"), role: .owner, in: cid("room"))
            #expect(try rolesOnEveryReader(store, of: uid("ana"), in: "room") == Array(repeating: .owner, count: Self.readerCount))

            try await store.putMember(uid("ana"), role: .member, in: cid("room"))
            #expect(try rolesOnEveryReader(store, of: uid("ana"), in: "room") == Array(repeating: .member, count: Self.readerCount),
                    "a demotion is seen at once")
        }
    }

    @Test func aCachedNonMemberIsAdmittedOnceAdded() async throws {
        try await withCachingStore { store in
            _ = try await store.createConversation(id: cid("room"), title: nil, owner: uid("owner"))
            for _ in 0..<2 {
                #expect(try rolesOnEveryReader(store, of: uid("bob"), in: "room") == Array(repeating: nil, count: Self.readerCount))
            }
            try await store.putMember(uid("bob"), in: cid("room"))
            #expect(try rolesOnEveryReader(store, of: uid("bob"), in: "room") == Array(repeating: .member, count: Self.readerCount))
        }
    }

    /// A change to one conversation's members, or to another user, leaves
    /// the others' cached roles right; the cache is keyed by both.
    @Test func rolesAreKeptApartByUserAndConversation() async throws {
        try await withCachingStore { store in
            _ = try await store.createConversation(id: cid("a"), title: nil, owner: uid("ana"))
            _ = try await store.createConversation(id: cid("b"), title: nil, owner: uid("bob"))
            try await store.putMember(uid("bob"), in: cid("a"))
            let expected: [(String, String, MemberRole?)] = [
                ("ana", "a", .owner), ("bob", "a", .member), ("ana", "b", nil), ("bob", "b", .owner),
            ]
            for _ in 0..<2 {
                for (user, conversation, role) in expected {
                    #expect(try rolesOnEveryReader(store, of: uid(user), in: conversation) == Array(repeating: role, count: Self.readerCount))
                }
            }
            #expect(try await store.removeMember(uid("bob"), from: cid("a")))
            try await store.putMember(uid("ana"), in: cid("b"))
            let after: [(String, String, MemberRole?)] = [
                ("ana", "a", .owner), ("bob", "a", nil), ("ana", "b", .member), ("bob", "b", .owner),
            ]
            for (user, conversation, role) in after {
                #expect(try rolesOnEveryReader(store, of: uid(user), in: conversation) == Array(repeating: role, count: Self.readerCount),
                        "\(user) in \(conversation)")
            }
        }
    }

    /// Each membership change moves `members_version` in its own
    /// transaction (the triggers of migrations/0007), and nothing else does.
    @Test func theMembersVersionMovesWithEveryMembershipChangeOnly() async throws {
        try await withCachingStore { store in
            _ = try await store.createConversation(id: cid("room"), title: nil, owner: uid("owner"))
            let path = store.configuration.path
            func version() throws -> Int64 {
                let connection = try SQLiteConnection(path: path)
                defer { connection.close() }
                return try connection.cachedStatement(sql: "SELECT members_version FROM conversations WHERE id = 'room'")
                    .firstRow { $0.int64(0) } ?? -1
            }
            var last = try version()
            #expect(last >= 1, "the owner's row moved it")
            func expectMoved(_ what: String) throws {
                let now = try version()
                #expect(now > last, "\(what) moves it")
                last = now
            }
            try await store.putMember(uid("ana"), in: cid("room"))
            try expectMoved("an added member")
            try await store.putMember(uid("ana"), role: .owner, in: cid("room"))
            try expectMoved("a role change")
            #expect(try await store.removeMember(uid("ana"), from: cid("room")))
            try expectMoved("a removal")
            try await store.append(NewMessage(sender: "owner", body: "hi"), to: cid("room"))
            #expect(try version() == last, "a message does not")
        }
    }

    // MARK: - Support

    private func withCachingStore(_ body: (SQLiteHistoryStore) async throws -> Void) async throws {
        try await withTemporaryDirectory { directory in
            let store = try SQLiteHistoryStore(configuration: SQLiteStoreConfiguration(
                path: directory.databasePath, durability: .normal, readerCount: Self.readerCount))
            defer { store.close() }
            try await body(store)
        }
    }

    /// The role each reader of the pool passes to the access decision for
    /// `user` in `conversation`: as many reads as readers, each held inside
    /// its snapshot until all have decided, so each is on its own
    /// connection. A non-member's read fails as a missing conversation.
    private func rolesOnEveryReader(_ store: SQLiteHistoryStore, of user: UserID, in conversation: String) throws -> [MemberRole?] {
        let barrier = Barrier(parties: Self.readerCount)
        let seen = Seen()
        let access = AccessCheck(user: user) { role, _ in
            seen.add(role)
            barrier.arriveAndWait()
            return role == nil ? .notAMember : nil
        }
        let finished = DispatchGroup()
        for _ in 0..<Self.readerCount {
            finished.enter()
            Thread.detachNewThread {
                defer { finished.leave() }
                do {
                    _ = try store.conversation(cid(conversation), access: access)
                } catch {
                    if case .conversationNotFound? = error as? StoreError { seen.refused() } else { seen.failed(error) }
                }
            }
        }
        guard finished.wait(timeout: .now() + 60) == .success else {
            Issue.record("the reads did not finish")
            return []
        }
        let (roles, refusals, failures) = seen.result
        #expect(failures.isEmpty, "\(failures)")
        #expect(refusals == roles.filter { $0 == nil }.count, "exactly the non-members are refused")
        return roles
    }
}

/// Holds each arriving thread until `parties` have arrived (or 30 s pass).
private final class Barrier: @unchecked Sendable {
    private let condition = NSCondition()
    private let parties: Int
    private var arrived = 0

    init(parties: Int) {
        self.parties = parties
    }

    func arriveAndWait() {
        condition.lock()
        defer { condition.unlock() }
        arrived += 1
        if arrived == parties { condition.broadcast(); return }
        let deadline = Date().addingTimeInterval(30)
        while arrived < parties && condition.wait(until: deadline) {}
    }
}

/// What the concurrent reads saw, gathered under a lock.
private final class Seen: @unchecked Sendable {
    private let lock = NSLock()
    private var roles: [MemberRole?] = []
    private var refusals = 0
    private var failures: [String] = []

    func add(_ role: MemberRole?) { lock.withLock { roles.append(role) } }
    func refused() { lock.withLock { refusals += 1 } }
    func failed(_ error: any Error) { lock.withLock { failures.append("\(error)") } }

    var result: (roles: [MemberRole?], refusals: Int, failures: [String]) {
        lock.withLock { (roles, refusals, failures) }
    }
}
