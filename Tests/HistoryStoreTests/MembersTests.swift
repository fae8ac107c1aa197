import HistoryTestSupport
import Testing
@testable import HistoryStore
@testable import HistorySQLite

@Suite("Members", .postgresCluster)
struct MembersTests {
    private func uid(_ text: String) -> UserID {
        UserID(text)!
    }

    /// Every member of the conversation, read in keyset pages of `limit`.
    private func allPages(_ store: any HistoryStore, _ conversation: String, limit: Int) throws -> [MemberPage] {
        var pages: [MemberPage] = []
        var after: UserID?
        repeat {
            let page = try store.members(of: cid(conversation), after: after, limit: limit)
            pages.append(page)
            after = page.members.last?.userID
        } while pages.last!.hasMore
        return pages
    }

    // MARK: - User ids

    @Test func userIDRules() {
        for good in ["a", "ana", "Ana.Maria@example.org", "user_1-2", String(repeating: "z", count: 64)] {
            #expect(UserID(good)?.rawValue == good, "\(good)")
        }
        for bad in ["", String(repeating: "z", count: 65), "ana maria", "ana/1", "ana:1", "é", "ana\u{0}", "a+b"] {
            #expect(UserID(bad) == nil, "\(bad)")
        }
        // A substring is accepted as it is (a path segment, a token claim).
        let path = "/members/bob.k"
        #expect(UserID(path.split(separator: "/").last!)?.rawValue == "bob.k")
    }

    @Test func userIDsOrderByteByByte() {
        // Byte order: '-' < '.' < digits < '@' < upper case < '_' < lower case.
        let ordered = ["-x", ".x", "0x", "9x", "@x", "Ax", "Zx", "_x", "ax", "zx"].map(uid)
        #expect(ordered.shuffled().sorted() == ordered)
        #expect(uid("B") < uid("a"))
        #expect(uid("ab") < uid("abc"))
    }

    // MARK: - Adding, changing, removing

    @Test(arguments: StoreBackend.allCases) func putAddsThenChangesThenLeavesUnchanged(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("room")
            let before = Timestamp.now()
            let added = try await store.putMember(uid("ana"), role: .member, in: cid("room"))
            guard case .added(let member) = added else { Issue.record("expected added, got \(added)"); return }
            #expect(member.userID == uid("ana"))
            #expect(member.role == .member)
            #expect(member.joinedAt >= before && member.joinedAt <= Timestamp.now())

            let again = try await store.putMember(uid("ana"), role: .member, in: cid("room"))
            #expect(again == .unchanged(member))

            let promoted = try await store.putMember(uid("ana"), role: .owner, in: cid("room"))
            var owner = member
            owner.role = .owner
            #expect(promoted == .changed(owner), "the role changes, joined_at is kept")
            #expect(try store.role(of: uid("ana"), in: cid("room")) == .owner)
            #expect(try store.members(of: cid("room"), after: nil, limit: 10) == MemberPage(members: [owner], hasMore: false))

            let demoted = try await store.putMember(uid("ana"), in: cid("room"))
            #expect(demoted == .changed(member), "the role defaults to member")
            #expect(demoted.member == member)
        }
    }

    @Test(arguments: StoreBackend.allCases) func removeAnswersWhetherSomeoneWasRemoved(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("room")
            try await store.make("other")
            try await store.putMember(uid("ana"), in: cid("room"))
            try await store.putMember(uid("ana"), in: cid("other"))
            try await store.putMember(uid("bob"), in: cid("room"))

            #expect(try await store.removeMember(uid("ana"), from: cid("room")) == true)
            #expect(try await store.removeMember(uid("ana"), from: cid("room")) == false)
            #expect(try await store.removeMember(uid("carol"), from: cid("room")) == false)
            #expect(try store.role(of: uid("ana"), in: cid("room")) == nil)
            #expect(try store.role(of: uid("ana"), in: cid("other")) == .member, "only that conversation's membership ends")
            #expect(try store.members(of: cid("room"), after: nil, limit: 10).members.map(\.userID) == [uid("bob")])

            // Coming back is joining anew.
            let back = try await store.putMember(uid("ana"), in: cid("room"))
            guard case .added = back else { Issue.record("expected added, got \(back)"); return }
        }
    }

    @Test(arguments: StoreBackend.allCases) func memberChangesDoNotMoveTheMessageVersion(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("room")
            try await store.post(2, to: "room")
            try await store.putMember(uid("ana"), in: cid("room"))
            try await store.putMember(uid("ana"), role: .owner, in: cid("room"))
            _ = try await store.removeMember(uid("ana"), from: cid("room"))
            let conversation = try store.conversation(cid("room"))
            #expect(conversation.version == 2)
            #expect(conversation.messageCount == 2)
            #expect(try store.changes(in: cid("room"), ChangeQuery(since: 0)).events.count == 2)
        }
    }

    @Test(arguments: StoreBackend.allCases) func aMissingConversationIsNotFoundForEveryMemberCall(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            let missing = cid("missing")
            await #expect(throws: StoreError.conversationNotFound(missing)) {
                try await store.putMember(uid("ana"), in: missing)
            }
            await #expect(throws: StoreError.conversationNotFound(missing)) {
                try await store.removeMember(uid("ana"), from: missing)
            }
            #expect(throws: StoreError.conversationNotFound(missing)) {
                try store.members(of: missing, after: nil, limit: 10)
            }
            let role = try store.role(of: uid("ana"), in: missing)
            #expect(role == nil)
            // Nothing was created on the way.
            #expect(throws: StoreError.conversationNotFound(missing)) { try store.conversation(missing) }
        }
    }

    // MARK: - Pages

    @Test(arguments: StoreBackend.allCases) func keysetPagesCoverManyMembersWithoutRepeatOrGapInByteOrder(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("big")
            try await store.make("neighbour")
            try await store.putMember(uid("zz-neighbour"), in: cid("neighbour"))
            // Ids whose byte order differs from a case-insensitive or
            // numeric order: upper and lower case, digits, punctuation.
            let prefixes = ["A", "a", "B", "b", "0", "9", "_", "-", ".", "@"]
            let all = (0..<2_500).map { uid("\(prefixes[$0 % prefixes.count])user\($0)") }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, user) in all.enumerated() {
                    group.addTask {
                        _ = try await store.putMember(user, role: index % 100 == 0 ? .owner : .member, in: cid("big"))
                    }
                }
                try await group.waitForAll()
            }

            let pages = try allPages(store, "big", limit: 1000)
            #expect(pages.map(\.members.count) == [1000, 1000, 500])
            #expect(pages.map(\.hasMore) == [true, true, false])
            let read = pages.flatMap(\.members)
            #expect(read.map(\.userID) == all.sorted(), "every member once, in byte order")
            let byBytes = all.map { Array($0.rawValue.utf8) }.sorted { $0.lexicographicallyPrecedes($1) }
            #expect(read.map { Array($0.userID.rawValue.utf8) } == byBytes)
            #expect(read.filter { $0.role == .owner }.count == 25)

            // Small pages agree with big ones.
            #expect(try allPages(store, "big", limit: 7).flatMap(\.members) == read)
            // `after` need not be a member: the page starts above it.
            let middle = try store.members(of: cid("big"), after: uid("Auser"), limit: 1)
            #expect(middle.members.map(\.userID) == [all.sorted().first { $0 > uid("Auser") }!])
            // Past the last member: empty, nothing more.
            #expect(try store.members(of: cid("big"), after: uid("zzz"), limit: 1000) == MemberPage(members: [], hasMore: false))
            // An exact fit says there is no more.
            let last = try store.members(of: cid("big"), after: read[read.count - 3].userID, limit: 2)
            #expect(last.members.count == 2 && !last.hasMore)
        }
    }

    @Test(arguments: StoreBackend.allCases) func aPageLimitOutsideOneToAThousandIsRefused(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("room")
            for limit in [0, -1, 1001] {
                let error = #expect(throws: StoreError.self, "\(limit)") {
                    try store.members(of: cid("room"), after: nil, limit: limit)
                }
                guard case .invalid(let field, _)? = error else { Issue.record("wrong error \(String(describing: error))"); continue }
                #expect(field == .limit)
            }
            #expect(try store.members(of: cid("room"), after: nil, limit: 1000).members.isEmpty)
        }
    }

    // MARK: - Owners

    @Test(arguments: StoreBackend.allCases) func creatingWithAnOwnerMakesItTheFirstMember(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            let created = try await store.createConversation(id: cid("mine"), title: "Mine", owner: uid("ana"))
            #expect(try store.role(of: uid("ana"), in: cid("mine")) == .owner)
            let page = try store.members(of: cid("mine"), after: nil, limit: 100)
            #expect(page == MemberPage(members: [Member(userID: uid("ana"), role: .owner, joinedAt: created.createdAt)],
                                       hasMore: false))
            #expect(created.version == 0, "the owner is not a message")

            let generated = try await store.createConversation(owner: uid("bob"))
            #expect(try store.role(of: uid("bob"), in: generated.id) == .owner)

            let open = try await store.createConversation(id: cid("open"), title: nil)
            #expect(try store.members(of: open.id, after: nil, limit: 100).members.isEmpty, "no owner, no member")
        }
    }

    @Test(arguments: StoreBackend.allCases) func aRefusedCreateAddsNoMember(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("taken")
            await #expect(throws: StoreError.conversationExists(cid("taken"))) {
                try await store.createConversation(id: cid("taken"), title: nil, owner: uid("mallory"))
            }
            #expect(try store.role(of: uid("mallory"), in: cid("taken")) == nil)
            await #expect(throws: StoreError.self) {
                try await store.createConversation(id: cid("long"), title: String(repeating: "x", count: 100_000), owner: uid("mallory"))
            }
            #expect(try store.role(of: uid("mallory"), in: cid("long")) == nil)
        }
    }

    @Test func anOwnerThatCannotBeWrittenUndoesItsConversationButNotTheBatch() async throws {
        try await withTemporaryStore { store in
            // A trigger makes the owner's INSERT fail after the conversation's
            // INSERT succeeded: the request must leave nothing behind.
            try store.withWriterConnection { connection in
                Result { () throws(SQLiteError) in
                    try connection.execute(sql: """
                        CREATE TEMP TRIGGER refuse_mallory BEFORE INSERT ON members WHEN new.user_id = 'mallory'
                        BEGIN SELECT RAISE(ABORT, 'refused for the test'); END
                        """)
                }
            }.get()
            let results = Locked<[String: Result<Conversation, StoreError>]>([:])
            await withTaskGroup(of: Void.self) { group in
                for (id, owner) in [("refused", "mallory"), ("kept", "ana"), ("plain", nil)] {
                    group.addTask {
                        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                            store.createConversation(id: cid(id), title: nil, owner: owner.map(uid)) { result in
                                results.withLock { $0[id] = result }
                                done.resume()
                            }
                        }
                    }
                }
            }
            guard case .failure(.storage)? = results.value["refused"] else {
                Issue.record("expected a storage failure, got \(String(describing: results.value["refused"]))"); return
            }
            #expect(throws: StoreError.conversationNotFound(cid("refused"))) { try store.conversation(cid("refused")) }
            #expect(try queryStrings(store.configuration.path, "SELECT count(*) FROM members WHERE user_id = 'mallory'") == ["0"])
            #expect(try store.role(of: uid("ana"), in: cid("kept")) == .owner)
            #expect(try store.conversation(cid("plain")).id == cid("plain"))
            // The id stays free: creating it again works.
            let again = try await store.createConversation(id: cid("refused"), title: nil, owner: uid("bob"))
            #expect(try store.role(of: uid("bob"), in: again.id) == .owner)
        }
    }

    @Test(arguments: StoreBackend.allCases) func concurrentCreatesWithOwnersInOneBatchEachGetTheirOwner(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            let count = 64
            let created = try await withThrowingTaskGroup(of: (Int, Conversation).self) { group in
                for index in 0..<count {
                    group.addTask { (index, try await store.createConversation(id: cid("c\(index)"), title: nil, owner: uid("u\(index)"))) }
                }
                var created: [Int: Conversation] = [:]
                for try await (index, conversation) in group { created[index] = conversation }
                return created
            }
            #expect(created.count == count)
            for index in 0..<count {
                #expect(try store.role(of: uid("u\(index)"), in: cid("c\(index)")) == .owner)
                #expect(try store.members(of: cid("c\(index)"), after: nil, limit: 10).members.map(\.userID) == [uid("u\(index)")])
            }
            #expect(try store.role(of: uid("u1"), in: cid("c0")) == nil)
        }
    }

    // MARK: - Roles

    @Test(arguments: StoreBackend.allCases) func roleLookups(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            _ = try await store.createConversation(id: cid("room"), title: nil, owner: uid("owner"))
            try await store.make("elsewhere")
            try await store.putMember(uid("ana"), in: cid("room"))
            try await store.putMember(uid("bob"), in: cid("elsewhere"))
            #expect(try store.role(of: uid("owner"), in: cid("room")) == .owner)
            #expect(try store.role(of: uid("ana"), in: cid("room")) == .member)
            #expect(try store.role(of: uid("bob"), in: cid("room")) == nil, "a member elsewhere is not a member here")
            #expect(try store.role(of: uid("Ana"), in: cid("room")) == nil, "user ids are case-sensitive")
            #expect(try store.role(of: uid("nobody"), in: cid("nowhere")) == nil)
        }
    }

    @Test func membersSurviveReopenAndRolesAreFoundWithAndWithoutTheSeqCache() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.databasePath
            let configuration = SQLiteStoreConfiguration(path: path, durability: .full)
            var store = try SQLiteHistoryStore(configuration: configuration)
            let created = try await store.createConversation(id: cid("room"), title: nil, owner: uid("ana"))
            try await store.putMember(uid("bob"), role: .member, in: cid("room"))
            let before = try store.members(of: cid("room"), after: nil, limit: 100)
            store.close()

            store = try SQLiteHistoryStore(configuration: configuration)
            defer { store.close() }
            // The first lookup finds the conversation by its id (nothing
            // cached after a reopen), the second by the cached seq.
            for _ in 0..<2 {
                #expect(try store.role(of: uid("ana"), in: cid("room")) == .owner)
                #expect(try store.role(of: uid("bob"), in: cid("room")) == .member)
                #expect(try store.role(of: uid("carol"), in: cid("room")) == nil)
            }
            #expect(try store.members(of: cid("room"), after: nil, limit: 100) == before)
            #expect(before.members.first == Member(userID: uid("ana"), role: .owner, joinedAt: created.createdAt))
        }
    }

    /// What SQLite plans for the member reads: index seeks only. A full
    /// scan or a sort would make the check of every request, or a page of
    /// a big conversation, cost in proportion to the table.
    @Test func memberReadsAreIndexSeeksWithoutScanOrSort() async throws {
        try await withTemporaryStore { store in
            try await store.createConversation(id: cid("room"), title: nil, owner: uid("ana"))
            let connection = try SQLiteConnection(path: store.configuration.path)
            defer { connection.close() }
            let plans = [SQLiteReads.MemberSQL.page, SQLiteReads.MemberSQL.roleBySeq, SQLiteReads.MemberSQL.roleByConversationID]
            for sql in plans {
                let plan = try connection.makeStatement(sql: "EXPLAIN QUERY PLAN " + sql).rows { $0.string(3) }
                #expect(!plan.isEmpty)
                #expect(plan.allSatisfy { $0.hasPrefix("SEARCH ") }, "\(plan)")
                #expect(!plan.contains { $0.contains("TEMP B-TREE") }, "\(plan)")
                #expect(plan.contains { $0.contains("members USING PRIMARY KEY") }, "\(sql): \(plan)")
            }
            // The conversation row with the caller's role, a reader's first check
            // of a conversation in tokens mode: a seek on each table, nothing else.
            for sql in [SQLiteReads.ConversationSQL.withRoleByID] {
                let plan = try connection.makeStatement(sql: "EXPLAIN QUERY PLAN " + sql).rows { $0.string(3) }
                #expect(plan.allSatisfy { $0.hasPrefix("SEARCH ") || $0.hasSuffix("SCALAR SUBQUERY 1") }, "\(plan)")
                #expect(plan.contains { $0.hasPrefix("SEARCH conversations USING ") }, "\(sql): \(plan)")
                #expect(plan.contains { $0.contains("members USING PRIMARY KEY") }, "\(sql): \(plan)")
            }
            // The row with its members_version, when the reader may hold the
            // role (`SQLiteMemberRoleCache`): one seek, the members untouched.
            let plan = try connection.makeStatement(sql: "EXPLAIN QUERY PLAN " + SQLiteReads.ConversationSQL.withMembersVersionBySeq)
                .rows { $0.string(3) }
            #expect(plan == ["SEARCH conversations USING INTEGER PRIMARY KEY (rowid=?)"], "\(plan)")
        }
    }

    // MARK: - Migration

    @Test func aDatabaseAtSchemaTwoGainsMembersAndKeepsEverything() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.databasePath
            let bundled = try Migration.bundled()
            #expect(bundled.map(\.label).contains("0003_members"))
            let configuration = SQLiteStoreConfiguration(path: path, durability: .normal)
            // Written with plain SQL: today's store code writes columns that
            // later migrations add, so it cannot write a schema-2 file.
            let connection = try SQLiteConnection(path: path)
            _ = try SQLiteMigrator(migrations: Array(bundled.prefix(2))).migrate(connection)
            try connection.execute(sql: """
                INSERT INTO conversations (seq, id, title, created_at, message_count, oldest_id, newest_id, version)
                VALUES (1, 'old', 'Old', 0, 3, 1, 3, 3);
                INSERT INTO messages (place, sender, body, created_at, created_version, version)
                VALUES (68719476737, 'ana', 'one', 0, 1, 1), (68719476738, 'ana', 'two', 0, 2, 2),
                       (68719476739, 'ana', 'three', 0, 3, 3);
                """)
            connection.close()
            let posted: [Int64] = [1, 2, 3]
            #expect(try queryStrings(path, "SELECT count(*) FROM sqlite_master WHERE name = 'members'") == ["0"])

            let store = try SQLiteHistoryStore(configuration: configuration)
            defer { store.close() }
            #expect(try queryStrings(path, "SELECT version FROM schema_migrations ORDER BY version")
                == bundled.map { String($0.version) })
            #expect(try queryStrings(path, "SELECT name FROM sqlite_master WHERE tbl_name = 'members' AND type = 'index' AND sql IS NOT NULL ORDER BY name")
                == ["members_by_user", "members_by_user_activity"])
            #expect(try queryStrings(path, "SELECT sql LIKE '%WITHOUT ROWID%' FROM sqlite_master WHERE name = 'members'") == ["1"])

            let old = try store.conversation(cid("old"))
            #expect(old.title == "Old" && old.messageCount == 3 && old.version == 3)
            #expect(try store.allIDs(of: "old") == posted)
            #expect(try store.members(of: cid("old"), after: nil, limit: 10).members.isEmpty)
            try await store.putMember(uid("ana"), in: cid("old"))
            #expect(try store.role(of: uid("ana"), in: cid("old")) == .member)
            let new = try await store.createConversation(id: cid("new"), title: nil, owner: uid("bob"))
            #expect(try store.role(of: uid("bob"), in: new.id) == .owner)
        }
    }
}
