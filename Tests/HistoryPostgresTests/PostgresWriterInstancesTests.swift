import Dispatch
import Foundation
import HistoryPostgres
import HistoryStore
import HistoryTestSupport
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension PostgresTests {
    /// Group commit and what several instances sharing one database rely
    /// on: two `PostgresWriter`s on two pools are two instances.
    @Suite("PostgresWriter across instances")
    struct PostgresWriterInstancesTests {
        @Test func eachRequestOfAMixedBatchGetsItsOwnResultAndAFailureLeavesNothing() async throws {
            try await withWriter { instance, rows, uri in
                _ = try await instance.create("blocker").get()
                _ = try await instance.create("c").get()
                let first = try await instance.append("first", to: "c", clientID: "k").get().message

                let holder = try await holdNextBatch(of: instance, uri: uri)
                let answers = Mutex<[Int: String]>([:])
                let group = DispatchGroup()
                func record(_ index: Int) -> @Sendable (String) -> Void {
                    group.enter()
                    return { text in answers.withLock { $0[index] = text }; group.leave() }
                }
                let c = ConversationID("c")!
                let submitted: [(WriteRequest, String)] = [
                    (.append(NewMessage(sender: "a", body: "one"), conversation: c, completion: { [r = record(0)] in r(describe($0)) }), "created one"),
                    (.append(NewMessage(sender: "a", body: "x"), conversation: ConversationID("nowhere")!,
                             completion: { [r = record(1)] in r(describe($0)) }), "conversationNotFound"),
                    (.append(NewMessage(sender: "ana", body: "other", clientID: "k"), conversation: c,
                             completion: { [r = record(2)] in r(describe($0)) }), "clientIDConflict"),
                    (.createConversation(id: ConversationID("new")!, title: nil, owner: UserID("bo")!,
                                         completion: { [r = record(3)] in r(describe($0)) }), "created new"),
                    (.append(NewMessage(sender: "bo", body: "in new"), conversation: ConversationID("new")!,
                             completion: { [r = record(4)] in r(describe($0)) }), "created in new"),
                    (.edit(messageID: 1 << 40, conversation: c, body: "x", completion: { [r = record(5)] in r(describe($0)) }),
                     "messageNotFound"),
                    (.createConversation(id: c, title: nil, owner: nil, completion: { [r = record(6)] in r(describe($0)) }),
                     "conversationExists"),
                    (.markRead(UserID("zed")!, conversation: c, upTo: 1, completion: { [r = record(7)] in r(describe($0)) }),
                     "memberNotFound"),
                    (.append(NewMessage(sender: "a", body: "re", replyTo: 1 << 40), conversation: c,
                             completion: { [r = record(8)] in r(describe($0)) }), "replyTargetNotFound"),
                    (.putMember(UserID("bo")!, role: .member, conversation: c, completion: { [r = record(9)] in r(describe($0)) }),
                     "added bo"),
                    (.append(NewMessage(sender: "ana", body: "first", clientID: "k"), conversation: c,
                             completion: { [r = record(10)] in r(describe($0)) }), "existing first"),
                ]
                for (request, _) in submitted { instance.writer.submit(request) }
                try holder.execute(sql: "COMMIT")
                await withCheckedContinuation { continuation in group.notify(queue: .global()) { continuation.resume() } }

                #expect(answers.withLock { $0 } == Dictionary(uniqueKeysWithValues: submitted.enumerated().map { ($0, $1.1) }))
                // The mixed requests were one batch, committed after the blocked one
                // (onCommitted runs after the batch's answers: wait for it).
                for _ in 0..<1_000 where instance.commits.count < 5 { try await Task.sleep(for: .milliseconds(10)) }
                #expect(instance.commits.suffix(2).map(\.size) == [1, submitted.count])
                // Only what succeeded is stored: two messages in c (first, one), one in new.
                #expect(try rows.counters("c")[0...3] == [2, first.id, try rows.int64("SELECT max(id) FROM messages WHERE body = 'one'"), 2])
                #expect(try rows.counters("new")[0] == 1)
                #expect(try rows.int64("SELECT count(*) FROM messages") == 4)
                #expect(try rows.strings("SELECT user_id FROM members ORDER BY 1") == ["bo", "bo"])
            }
        }

        @Test func aRunOfPlainAppendsIsWrittenBeforeTheRequestsAfterIt() async throws {
            try await withWriter { instance, rows, uri in
                _ = try await instance.create("blocker").get()
                _ = try await instance.create("c", owner: "ana").get()
                _ = try await instance.create("d").get()
                let stored = try await instance.append("stored", to: "d", clientID: "s").get().message
                let holder = try await holdNextBatch(of: instance, uri: uri)
                let answers = Mutex<[Int: Int64]>([:])  // -1: refused
                let group = DispatchGroup()
                func append(_ index: Int, _ body: String, to conversation: String, clientID: String? = nil) {
                    group.enter()
                    instance.writer.submit(.append(NewMessage(sender: "bo", body: body, clientID: clientID),
                                                   conversation: ConversationID(conversation)!) { result in
                        answers.withLock { $0[index] = result.value?.message.id ?? -1 }
                        group.leave()
                    })
                }
                append(0, "c1", to: "c")
                append(1, "d1", to: "d")
                append(2, "c2", to: "c")
                group.enter()
                instance.writer.submit(.markRead(UserID("ana")!, conversation: ConversationID("c")!, upTo: Int64.max) { result in
                    answers.withLock { $0[3] = result.value?.lastReadID ?? -1 }
                    group.leave()
                })
                append(4, "c3", to: "c", clientID: "k")
                append(5, "c4", to: "c")
                append(6, "x", to: "nowhere")
                // A client_id used earlier in the batch: the same post answers it, another body is refused.
                append(7, "c3", to: "c", clientID: "k")
                append(8, "other", to: "c", clientID: "k")
                // A stored one deleted in the batch: a retry answers the tombstone, whatever its body.
                group.enter()
                instance.writer.submit(.delete(messageID: stored.id, conversation: ConversationID("d")!) { _ in group.leave() })
                append(9, "a guess", to: "d", clientID: "s")
                append(10, "stored", to: "c", clientID: "s")
                try holder.execute(sql: "COMMIT")
                await withCheckedContinuation { continuation in group.notify(queue: .global()) { continuation.resume() } }
                let ids = answers.withLock { $0 }
                // The marker saw c2, appended just before it in the same run.
                #expect(ids[3] == ids[2])
                #expect(ids[6] == -1)
                #expect(ids[7] == ids[4] && ids[8] == -1 && ids[9] == stored.id)
                // The same client_id in another conversation is another message.
                #expect(ids[10] != stored.id && ids[10] != -1)
                let c = try rows.int64s("""
                    SELECT m.id FROM messages m JOIN conversations v ON v.seq = m.conversation_seq WHERE v.id = 'c' ORDER BY m.version
                    """)
                #expect(c == [ids[0], ids[2], ids[4], ids[5], ids[10]].compactMap { $0 })
                #expect(c == c.sorted())
                #expect(try rows.strings("SELECT body FROM messages WHERE body <> 'waits' ORDER BY id")
                    == ["", "c1", "d1", "c2", "c3", "c4", "stored"])
                #expect(try rows.counters("c")[0...3] == [5, c.first, c.last, 5])
                #expect(try rows.counters("d")[0...3] == [2, stored.id, ids[1], 3])
            }
        }

        @Test func aLostConnectionAnswersUnavailableAndTheNextBatchWorks() async throws {
            try await withWriter { instance, rows, uri in
                _ = try await instance.create("c").get()
                // The writer's idle session ended (a server restart): the next
                // batch is written on a fresh one, nothing to see for callers.
                let idle = try #require(try rows.int64("""
                    SELECT pid FROM pg_stat_activity
                    WHERE datname = current_database() AND application_name = 'history-server' AND pid <> pg_backend_pid()
                    """))
                #expect(try rows.connection.query("SELECT pg_terminate_backend($1::integer, 10000)", [.int32(Int32(idle))]).bool(0, 0))
                #expect(try await instance.append("after a restart", to: "c").get().message.version == 1)

                // Ended in the middle of a batch (its create waits for another
                // session's uncommitted row of the same id): answered
                // .unavailable, nothing stored, and the next batch works.
                let other = try PGConnection(uri: uri)
                try other.execute(sql: "BEGIN")
                try other.execute(sql: "INSERT INTO conversations (id, created_at) VALUES ('b', 0)")
                let answer = Mutex<Result<Conversation, StoreError>?>(nil)
                instance.writer.submit(.createConversation(id: ConversationID("b")!, title: nil, owner: nil) { result in
                    answer.withLock { $0 = result }
                })
                var waiting: Int64?
                for _ in 0..<3_000 where waiting == nil {
                    waiting = try rows.int64("""
                        SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'
                        """)
                    if waiting == nil { try await Task.sleep(for: .milliseconds(10)) }
                }
                #expect(try rows.connection.query("SELECT pg_terminate_backend($1::integer, 10000)",
                                                  [.int32(Int32(try #require(waiting)))]).bool(0, 0))
                for _ in 0..<3_000 where answer.withLock({ $0 }) == nil { try await Task.sleep(for: .milliseconds(10)) }
                guard case .failure(.unavailable)? = answer.withLock({ $0 }) else {
                    Issue.record("not answered unavailable: \(String(describing: answer.withLock { $0 }))")
                    return
                }
                try other.execute(sql: "ROLLBACK")
                #expect(try rows.int64("SELECT count(*) FROM conversations") == 1)
                #expect(try await instance.create("b").get().id.rawValue == "b")
                #expect(try rows.int64("SELECT count(*) FROM messages") == 1)
            }
        }

        @Test func aBatchThatLosesADeadlockIsWrittenAgain() async throws {
            try await withTestDatabase { uri in
                try WriterInstance.migrate(uri)
                let rows = try Rows(uri)
                // Which of the two PostgreSQL aborts depends on whose
                // deadlock_timeout runs out first: the writer's sessions
                // check after 10 s (room for the other to start waiting on a
                // busy machine), the other after 60 s.
                let database = try #require(rows.strings("SELECT current_database()").first ?? nil)
                try rows.connection.execute(sql: "ALTER DATABASE \"\(database)\" SET deadlock_timeout = '10s'")
                let instance = WriterInstance(uri: uri)
                defer { instance.close() }
                // Another instance's transaction: it inserts conversation "b"
                // (uncommitted), then, once the writer waits on that row, asks
                // for the activity row the writer holds: a cycle. The writer,
                // waiting first, is the one PostgreSQL aborts.
                let inserted = DispatchSemaphore(value: 0)
                let proceed = DispatchSemaphore(value: 0)
                let finished = DispatchSemaphore(value: 0)
                let otherError = Mutex<String?>(nil)
                Thread {
                    do {
                        let other = try PGConnection(uri: uri)
                        try other.execute(sql: "SET deadlock_timeout = '60s'")
                        try other.execute(sql: "BEGIN")
                        try other.execute(sql: "INSERT INTO conversations (id, created_at) VALUES ('b', 0)")
                        inserted.signal()
                        proceed.wait()
                        try other.execute(sql: "UPDATE activity_counter SET value = value + 1 WHERE id = 1")
                        try other.execute(sql: "COMMIT")
                    } catch {
                        otherError.withLock { $0 = "\(error)" }
                    }
                    finished.signal()
                }.start()
                await withCheckedContinuation { continuation in
                    DispatchQueue.global().async { inserted.wait(); continuation.resume() }
                }
                let answer = Mutex<Result<Conversation, StoreError>?>(nil)
                instance.writer.submit(.createConversation(id: ConversationID("b")!, title: nil, owner: nil) { result in
                    answer.withLock { $0 = result }
                })
                for _ in 0..<3_000 {
                    let waiting = try rows.int64("""
                        SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'
                        """)
                    if waiting == 1 { break }
                    try await Task.sleep(for: .milliseconds(10))
                }
                proceed.signal()
                await withCheckedContinuation { continuation in
                    DispatchQueue.global().async { finished.wait(); continuation.resume() }
                }
                for _ in 0..<3_000 where answer.withLock({ $0 }) == nil { try await Task.sleep(for: .milliseconds(10)) }
                #expect(otherError.withLock { $0 } == nil)
                // Written again after the other committed: the id is taken.
                #expect(answer.withLock { $0 } == .failure(.conversationExists(ConversationID("b")!)))
                #expect(try rows.int64("SELECT count(*) FROM conversations") == 1)
            }
        }

        @Test func anUnreachableDatabaseAnswersUnavailable() async throws {
            let pool = PostgresConnectionPool(uri: "postgresql://nobody@127.0.0.1:1/none?connect_timeout=2", maximumConnections: 1)
            let writer = PostgresWriter(pool: pool, maximumBatchSize: 8) { _ in }
            defer { writer.close(); pool.close() }
            let result = await withCheckedContinuation { continuation in
                writer.submit(.createConversation(id: nil, title: nil, owner: nil) { continuation.resume(returning: $0) })
            }
            guard case .failure(.unavailable) = result else {
                Issue.record("not answered unavailable: \(result)")
                return
            }
            #expect(throws: StoreError.self) {
                try writer.bulkAppend([NewMessage(sender: "a", body: "b")], to: ConversationID("c")!)
            }
        }

        @Test func appendsThroughTwoInstancesKeepIDsAndVersionsInCommitOrder() async throws {
            try await withTestDatabase { uri in
                try WriterInstance.migrate(uri)
                let first = WriterInstance(uri: uri)
                let second = WriterInstance(uri: uri)
                defer { first.close(); second.close() }
                let rows = try Rows(uri)
                _ = try await first.create("shared").get()
                _ = try await second.create("other").get()

                let failures = await withTaskGroup(of: Int.self) { group in
                    for poster in 0..<16 {
                        let instance = poster % 2 == 0 ? first : second
                        group.addTask {
                            var failed = 0
                            for index in 0..<25 {
                                // Some also to another conversation: batches lock two rows.
                                let target = index % 5 == 0 ? "other" : "shared"
                                if case .failure = await instance.append("p\(poster) m\(index)", to: target) { failed += 1 }
                            }
                            return failed
                        }
                    }
                    return await group.reduce(0, +)
                }
                #expect(failures == 0)
                #expect(first.commits.count > 1 && second.commits.count > 1)
                for conversation in ["shared", "other"] {
                    let seq = try #require(try rows.int64("SELECT seq FROM conversations WHERE id = $1", [.text(conversation)]))
                    // In id order, versions are 1, 2, 3...: ids were given in commit order, versions without a gap.
                    let versions = try rows.int64s("SELECT version FROM messages WHERE conversation_seq = $1 ORDER BY id", [.int64(seq)])
                    #expect(versions == Array(1...Int64(versions.count)))
                    #expect(try rows.counters(conversation)[0] == Int64(versions.count))
                    #expect(try rows.counters(conversation)[3] == Int64(versions.count))
                }
                #expect(try rows.int64("SELECT count(*) FROM messages") == 16 * 25)
                // Every activity value was handed out once.
                #expect(try rows.activity() == 2 + 16 * 25)
            }
        }

        @Test func aClientIDRetriedThroughTheOtherInstanceIsTheSameMessage() async throws {
            try await withTestDatabase { uri in
                try WriterInstance.migrate(uri)
                let first = WriterInstance(uri: uri)
                let second = WriterInstance(uri: uri)
                defer { first.close(); second.close() }
                _ = try await first.create("c").get()
                let posted = try await first.append("hello", to: "c", clientID: "retry-1").get().message
                #expect(try await second.append("hello", to: "c", clientID: "retry-1").get() == .existing(posted))
                #expect(await second.append("changed", to: "c", clientID: "retry-1") == .failure(.clientIDConflict(clientID: "retry-1")))

                // The same post sent to both at once: one stores it, the other answers it.
                for round in 0..<10 {
                    async let a = first.append("same", to: "c", clientID: "race-\(round)")
                    async let b = second.append("same", to: "c", clientID: "race-\(round)")
                    let outcomes = try await [a.get(), b.get()]
                    let created = outcomes.filter { if case .created = $0 { true } else { false } }
                    #expect(created.count == 1)
                    #expect(outcomes[0].message == outcomes[1].message)
                }
                #expect(try Rows(uri).int64("SELECT count(*) FROM messages") == 11)
            }
        }

        @Test func aConversationCreatedByTwoInstancesAtOnceExistsOnce() async throws {
            try await withTestDatabase { uri in
                try WriterInstance.migrate(uri)
                let first = WriterInstance(uri: uri)
                let second = WriterInstance(uri: uri)
                defer { first.close(); second.close() }
                for round in 0..<20 {
                    let id = "room-\(round)"
                    async let a = first.create(id, owner: "ana")
                    async let b = second.create(id, owner: "bo")
                    let outcomes = await [a, b]
                    #expect(outcomes.filter { $0.value != nil }.count == 1)
                    #expect(outcomes.contains(.failure(.conversationExists(ConversationID(id)!))))
                }
                let rows = try Rows(uri)
                #expect(try rows.int64("SELECT count(*) FROM conversations") == 20)
                // Exactly one owner each: the loser's member row was never written.
                #expect(try rows.int64("SELECT count(*) FROM members") == 20)
            }
        }

        @Test func aListeningSessionReceivesEveryCommitsNotices() async throws {
            try await withTestDatabase { uri in
                try WriterInstance.migrate(uri)
                let listener = try PGConnection(uri: uri)
                try listener.execute(sql: "LISTEN \(ChangeNotice.channel)")
                let instance = WriterInstance(uri: uri)
                defer { instance.close() }
                let created = try await instance.create("c", owner: "ana").get()
                let message = try await instance.append("hi", to: "c").get().message
                _ = try await instance.edit(message.id, in: "c", body: "hi!").get()
                _ = try await instance.put("bo", in: "c").get()
                _ = try await instance.markRead("ana", in: "c", upTo: message.id).get()
                _ = try instance.writer.bulkAppend([NewMessage(sender: "s", body: "1"), NewMessage(sender: "s", body: "2")],
                                                   to: created.id)
                // onCommitted runs after the answers: wait for the bulk load's.
                for _ in 0..<1_000 where instance.commits.count < 6 { try await Task.sleep(for: .milliseconds(10)) }
                let sent = instance.commits.flatMap(\.notices)
                #expect(instance.commits.count == 6)

                var received: [ChangeNotice] = []
                var descriptor = pollfd(fd: listener.socketDescriptor, events: Int16(POLLIN), revents: 0)
                while received.count < sent.count, poll(&descriptor, 1, 30_000) == 1 {
                    try listener.consumeInput()
                    while let notification = listener.nextNotification() {
                        received += ChangeNotice.decode(notification.payload).notices
                    }
                }
                #expect(received == sent)
                let seq = try #require(try Rows(uri).int64("SELECT seq FROM conversations WHERE id = 'c'"))
                #expect(received[0] == .inbox(activity: 1, conversations: [], users: ["ana"]))
                #expect(received[1] == .conversation(created.id, version: 1, changedIDs: [message.id...message.id]))
                #expect(received[2] == .inbox(activity: 2, conversations: [seq], users: []))
                #expect(received[3] == .conversation(created.id, version: 2, changedIDs: [message.id...message.id]))
                #expect(received[5] == .inbox(activity: 4, conversations: [seq], users: ["bo"]))
                #expect(received[6] == .inbox(activity: 5, conversations: [], users: ["ana"]))
            }
        }
    }
}

/// A result as a short word, for comparing a batch's answers at a glance.
private func describe<T>(_ result: Result<T, StoreError>) -> String {
    switch result {
    case .success(let value):
        switch value {
        case let outcome as AppendOutcome:
            switch outcome {
            case .created(let message): return "created " + message.body
            case .existing(let message): return "existing " + message.body
            }
        case let conversation as Conversation: return "created " + conversation.id.rawValue
        case let change as MemberChange:
            if case .added(let member) = change { return "added " + member.userID.rawValue }
            return "member changed"
        default: return "success"
        }
    case .failure(let error):
        let text = "\(error)"
        switch error {
        case .conversationNotFound: return "conversationNotFound"
        case .clientIDConflict: return "clientIDConflict"
        case .messageNotFound: return "messageNotFound"
        case .conversationExists: return "conversationExists"
        case .memberNotFound: return "memberNotFound"
        case .replyTargetNotFound: return "replyTargetNotFound"
        default: return text
        }
    }
}
