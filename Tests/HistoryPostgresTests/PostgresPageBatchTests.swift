import Dispatch
import Foundation
@testable import HistoryPostgres
import HistoryStore
import HistoryTestSupport
import Testing

extension PostgresTests {
    /// Newest and `before` pages and conversations read together
    /// (`PostgresPageBatch`, `ReadBatcher`) answer exactly what each read
    /// alone answers.
    @Suite struct PostgresPageBatchTests {
        /// A member's read: a non-member gets the answer of a missing conversation.
        private static func member(_ user: String) -> AccessCheck {
            AccessCheck(user: UserID(user)!) { role, _ in role == nil ? .notAMember : nil }
        }

        private static func summary(_ outcome: Result<Page, StoreError>) -> String {
            switch outcome {
            case .success(let page):
                "\(page.messages) older=\(page.hasOlder) newer=\(page.hasNewer) version=\(page.version) "
                    + "anchor=\(String(describing: page.anchor)) reset=\(String(describing: page.reset))"
            case .failure(let error):
                "error \(error)"
            }
        }

        /// Sixteen threads ask pages of every kind the statement reads
        /// (newest, `before` at the start, middle, end and past either end;
        /// limits 1 to 200) of conversations with members, an empty one, a
        /// missing one, one whose rows partly lack stored JSON, by members,
        /// strangers and an administrator, mixed with `after` and `around`
        /// pages read alone; one statement runs at a time, so the pages wait
        /// and go together. Each answer is compared with the same page read
        /// alone by `PostgresReads`, errors included. `asCalls`: the pages
        /// are asked through `page(…completion:)`, each thread asking all of
        /// its pages without waiting for any; the batcher's own threads then
        /// run the statements and answer.
        @Test(.timeLimit(.minutes(3)), arguments: [false, true])
        func pagesReadTogetherAnswerWhatEachReadAloneAnswers(asCalls: Bool) async throws {
            try await withTestDatabase { uri in
                let fixture = try PostgresReadsFixture(uri: uri)
                let names = ["c0", "c1", "c2", "c3", "empty"]
                var ids: [String: [Int64]] = [:]
                var seqs: [String: Int64] = [:]
                for (index, name) in names.enumerated() {
                    let seq = try fixture.conversation(name)
                    seqs[name] = seq
                    try fixture.addMember(seq, "user-\(index % 2)")
                    if name != "empty" { ids[name] = try fixture.append(seq, count: 150 + 40 * index, sender: "user-\(index % 2)") }
                }
                try fixture.delete(seqs["c1"]!, ids["c1"]![10])
                try fixture.edit(seqs["c1"]!, ids["c1"]![11], body: "edited")
                // Opening the store fills the stored JSON of every row.
                let store = try PostgresHistoryStore(configuration: PostgresStoreConfiguration(
                    uri: uri, readerCount: 4, pageStatements: 1))
                defer { store.close() }
                try fixture.connection.query("UPDATE messages SET json_tail = NULL WHERE conversation_seq = $1 AND id % 7 = 0",
                                             [.int64(seqs["c2"]!)])

                var asked: [(ConversationID, PageQuery, AccessCheck)] = []
                let accesses: [AccessCheck] = [.admin, Self.member("user-0"), Self.member("user-1"), Self.member("stranger")]
                for name in names + ["missing"] {
                    let conversation = ConversationID(name)!
                    let all = ids[name] ?? []
                    var cursors: [PageCursor] = [.newest, .before(1), .before(Int64.max)]
                    if let first = all.first, let last = all.last {
                        cursors += [.before(first), .before(first + 1), .before(all[all.count / 2]), .before(last),
                                    .before(last + 1), .before(last + 1_000), .after(all[all.count / 3]), .around(all[all.count / 2])]
                    }
                    for (index, cursor) in cursors.enumerated() {
                        for limit in [1, 50, 200] {
                            asked.append((conversation, PageQuery(cursor: cursor, limit: limit), accesses[(index + limit) % accesses.count]))
                        }
                    }
                }
                let expected = asked.map { conversation, query, access in
                    Self.summary(Result { () throws(StoreError) in try fixture.reads.page(of: conversation, query, access: access) })
                }
                #expect(expected.contains { $0.hasPrefix("error") } && expected.contains { !$0.hasPrefix("error") })
                // Conversations read alone (a conditional request's first read) go in the same statements.
                let conversationsAsked = (names + ["missing"]).flatMap { name in accesses.map { (ConversationID(name)!, $0) } }
                let conversationsExpected = conversationsAsked.map { conversation, access in
                    "\(Result { () throws(StoreError) in try fixture.reads.conversation(conversation, access: access) })"
                }

                // The first statement waits behind a lock while the other
                // threads ask theirs: they queue, and go together after it.
                try fixture.connection.execute(sql: "BEGIN")
                try fixture.connection.execute(sql: "LOCK TABLE messages IN ACCESS EXCLUSIVE MODE")
                let requests = asked
                let answers = Locked<[Int: String]>([:])
                let wrongConversations = Locked<[String]>([])
                let passes = 3
                let group = DispatchGroup()
                let calls = DispatchGroup()
                for thread in 0..<16 {
                    group.enter()
                    Thread.detachNewThread {
                        defer { group.leave() }
                        for pass in 0..<passes {
                            for index in requests.indices where (index + pass) % 16 == thread {
                                let (conversation, query, access) = requests[index]
                                if asCalls {
                                    calls.enter()
                                    store.page(of: conversation, query, access: access) { outcome in
                                        answers.withLock { $0[index * passes + pass] = Self.summary(outcome) }
                                        calls.leave()
                                    }
                                } else {
                                    let answer = Self.summary(Result { () throws(StoreError) in
                                        try store.page(of: conversation, query, access: access)
                                    })
                                    answers.withLock { $0[index * passes + pass] = answer }
                                }
                                let other = (index + pass) % conversationsAsked.count
                                let (conversation2, access2) = conversationsAsked[other]
                                let read = "\(Result { () throws(StoreError) in try store.conversation(conversation2, access: access2) })"
                                if read != conversationsExpected[other] { wrongConversations.withLock { $0.append(read) } }
                            }
                        }
                    }
                }
                let deadline = ContinuousClock.now + .seconds(20)
                while store.pageStatementCounts.waiting < 8 && ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(5))
                }
                #expect(store.pageStatementCounts.waiting >= 8)
                try fixture.connection.execute(sql: "COMMIT")
                #expect(group.wait(timeout: .now() + 60) == .success)
                #expect(calls.wait(timeout: .now() + 60) == .success)
                #expect(store.readsPagesLater)
                var mismatches = 0
                for index in asked.indices {
                    for pass in 0..<passes where answers.value[index * passes + pass] != expected[index] {
                        mismatches += 1
                        if mismatches <= 3 {
                            Issue.record("\(asked[index].0) \(asked[index].1): \(answers.value[index * passes + pass] ?? "none") != \(expected[index])")
                        }
                    }
                }
                #expect(mismatches == 0)
                #expect(wrongConversations.value.isEmpty, "\(wrongConversations.value.count) wrong, first: \(wrongConversations.value.prefix(3))")
                // The pages went together: fewer statements than pages.
                let (statements, pages, _) = store.pageStatementCounts
                #expect(pages > 0 && statements < pages, "\(statements) statements for \(pages) pages")
            }
        }

        /// A quarter of the readers, at most one per core, at least one;
        /// a setting outside 1...readers is refused before connecting.
        @Test func howManyStatementsRunAtOnce() async throws {
            let cases = [(8, 2, 2), (16, 2, 2), (16, 8, 4), (2, 2, 1), (1, 1, 1), (32, 4, 4), (64, 64, 16)]
            for (readers, processors, expected) in cases {
                #expect(PostgresBackend.defaultPageStatements(readers: readers, processors: processors) == expected,
                        "\(readers) readers, \(processors) cores")
            }
            for statements in [0, 3] {
                #expect(throws: StoreError.invalidSetting("pageStatements", reason: "must be between 1 and readerCount")) {
                    try PostgresHistoryStore(configuration: PostgresStoreConfiguration(
                        uri: "postgresql://nobody@/none?host=/nonexistent", readerCount: 2, pageStatements: statements))
                }
            }
        }

        /// A member removed between two pages read together no longer gets
        /// the conversation, while the other member in the same statement does.
        @Test(.timeLimit(.minutes(1)))
        func aRemovedMemberIsRefusedBesideAMemberWhoIsNot() async throws {
            try await withTestDatabase { uri in
                let fixture = try PostgresReadsFixture(uri: uri)
                let seq = try fixture.conversation("room")
                try fixture.addMember(seq, "ann")
                try fixture.addMember(seq, "bob")
                try fixture.append(seq, count: 30, sender: "ann")
                let store = try PostgresHistoryStore(configuration: PostgresStoreConfiguration(
                    uri: uri, readerCount: 2, pageStatements: 1))
                defer { store.close() }
                let room = ConversationID("room")!
                try fixture.removeMember(seq, "bob")
                let outcomes = Locked<[String: Set<String>]>([:])
                DispatchQueue.concurrentPerform(iterations: 8) { thread in
                    let user = thread % 2 == 0 ? "ann" : "bob"
                    for _ in 0..<20 {
                        let outcome = Result { () throws(StoreError) in
                            try store.page(of: room, PageQuery(limit: 10), access: Self.member(user))
                        }
                        let seen = switch outcome {
                        case .success(let page): "page of \(page.messages.count)"
                        case .failure(let error): "\(error)"
                        }
                        outcomes.withLock { _ = $0[user, default: []].insert(seen) }
                    }
                }
                #expect(outcomes.value == ["ann": ["page of 10"], "bob": ["\(StoreError.conversationNotFound(room))"]])
                #expect(store.pageStatementCounts.requests == 160)
            }
        }
    }
}
