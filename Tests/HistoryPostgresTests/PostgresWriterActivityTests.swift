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
    /// The `activity_counter` row taken as late as each request allows
    /// (PostgresBatch+Activity): after the conversation locks and the
    /// batch's writes, held until COMMIT, values in request order, and a
    /// tampered counter refused per request as before.
    @Suite("PostgresWriter's activity counter")
    struct PostgresWriterActivityTests {
        @Test func aBatchOfAppendsWritesFirstAndWaitsForTheCounterOnlyAtItsEnd() async throws {
            try await withWriter { instance, rows, uri in
                let conversations = ["c1", "c2", "c3"]
                for id in conversations { _ = try await instance.create(id).get() }
                // Another instance's transaction holds the counter's row, having taken five values.
                let holder = try PGConnection(uri: uri)
                try holder.execute(sql: "BEGIN")
                let held = try holder.query("UPDATE activity_counter SET value = value + 5 WHERE id = 1 RETURNING value")
                    .int64(0, 0)
                let answers = Mutex<[Int: Result<AppendOutcome, StoreError>]>([:])
                let group = DispatchGroup()
                for (index, conversation) in conversations.enumerated() {
                    group.enter()
                    instance.writer.submit(.append(NewMessage(sender: "ana", body: "m\(index)"),
                                                   conversation: ConversationID(conversation)!) { result in
                        answers.withLock { $0[index] = result }
                        group.leave()
                    })
                }
                var waiting: Int64?
                for _ in 0..<3_000 where waiting == nil {
                    waiting = try rows.int64("""
                        SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'
                        """)
                    if waiting == nil { try await Task.sleep(for: .milliseconds(10)) }
                }
                let pid = try #require(waiting)
                // The writer waits for the counter with its messages already
                // inserted (it holds the table's write lock) and its first
                // conversation locked: the counter comes after both.
                #expect(try rows.int64("""
                    SELECT count(*) FROM pg_locks
                    WHERE pid = $1::integer AND granted AND relation = 'messages'::regclass AND mode = 'RowExclusiveLock'
                    """, [.int32(Int32(pid))]) == 1)
                #expect(try rows.strings("SELECT query FROM pg_stat_activity WHERE pid = $1::integer", [.int32(Int32(pid))])
                    .first??.contains("UPDATE activity_counter") == true)
                do throws(PostgresError) {
                    try rows.connection.query("SELECT 1 FROM conversations WHERE id = 'c1' FOR UPDATE NOWAIT")
                    Issue.record("conversation c1 is not locked by the waiting batch")
                } catch {
                    #expect(error.kind == .lockNotAvailable)
                }
                #expect(answers.withLock { $0.isEmpty })

                try holder.execute(sql: "COMMIT")
                await withCheckedContinuation { continuation in group.notify(queue: .global()) { continuation.resume() } }
                #expect(answers.withLock { $0.count == 3 && $0.values.allSatisfy { $0.value != nil } })
                // Taken after the holder committed, above its values, in request order.
                for (index, conversation) in conversations.enumerated() {
                    #expect(try rows.counters(conversation)[4] == held + Int64(index) + 1)
                }
                #expect(try rows.activity() == held + 3)
                // onCommitted follows the answers: wait for the last batch's.
                for _ in 0..<1_000 where inboxActivities(instance.commits).last != held + 3 {
                    try await Task.sleep(for: .milliseconds(10))
                }
                #expect(inboxActivities(instance.commits).last == held + 3)
            }
        }

        @Test func twoInstancesOnSeparateConversationsCommitActivityInTheOrderTaken() async throws {
            try await withTestDatabase { uri in
                try WriterInstance.migrate(uri)
                let listener = try PGConnection(uri: uri)
                try listener.execute(sql: "LISTEN \(ChangeNotice.channel)")
                let first = WriterInstance(uri: uri)
                let second = WriterInstance(uri: uri)
                defer { first.close(); second.close() }
                let rows = try Rows(uri)
                // No conversation in common: only the counter's row orders the two writers.
                for index in 0..<4 {
                    _ = try await first.create("a\(index)").get()
                    _ = try await second.create("b\(index)").get()
                }
                let failures = await withTaskGroup(of: Int.self) { group in
                    for poster in 0..<8 {
                        let (instance, prefix) = poster % 2 == 0 ? (first, "a") : (second, "b")
                        group.addTask {
                            var failed = 0
                            for index in 0..<20 {
                                let target = "\(prefix)\((poster / 2 + index) % 4)"
                                if case .failure = await instance.append("p\(poster) m\(index)", to: target) { failed += 1 }
                            }
                            return failed
                        }
                    }
                    return await group.reduce(0, +)
                }
                #expect(failures == 0)
                // Each commit's inbox notice carries its last value; PostgreSQL
                // delivers them in commit order, which must be the order taken.
                let total: Int64 = 8 + 8 * 20
                var activities: [Int64] = []
                var descriptor = pollfd(fd: listener.socketDescriptor, events: Int16(POLLIN), revents: 0)
                while activities.last != total, poll(&descriptor, 1, 30_000) == 1 {
                    try listener.consumeInput()
                    while let notification = listener.nextNotification() {
                        for case .inbox(let activity, _, _) in ChangeNotice.decode(notification.payload).notices {
                            activities.append(activity)
                        }
                    }
                }
                #expect(activities.count > 2)
                #expect(zip(activities, activities.dropFirst()).allSatisfy { $0 < $1 }, "\(activities)")
                #expect(activities.last == total)
                #expect(try rows.activity() == total)
                // Every conversation's last value is one no other took.
                let values = try rows.int64s("SELECT activity FROM conversations")
                #expect(Set(values).count == 8)
            }
        }

        @Test func aMixedBatchGivesValuesInRequestOrder() async throws {
            try await withWriter { instance, rows, uri in
                _ = try await instance.create("blocker").get()
                _ = try await instance.create("c1", owner: "ana").get()
                _ = try await instance.create("c2").get()
                _ = try await instance.create("c3").get()
                let before = try rows.activity()
                let holder = try await holdNextBatch(of: instance, uri: uri)
                let failures = Mutex(0)
                let group = DispatchGroup()
                func counted<T>() -> @Sendable (Result<T, StoreError>) -> Void {
                    group.enter()
                    return { result in
                        if case .failure = result { failures.withLock { $0 += 1 } }
                        group.leave()
                    }
                }
                // Appends (a place each, real at the end) around a member
                // change and a read marker (real values, written at once).
                instance.writer.submit(.append(NewMessage(sender: "ana", body: "m1"), conversation: ConversationID("c1")!,
                                               completion: counted()))
                instance.writer.submit(.putMember(UserID("bo")!, role: .member, conversation: ConversationID("c2")!,
                                                  completion: counted()))
                instance.writer.submit(.append(NewMessage(sender: "ana", body: "m3"), conversation: ConversationID("c3")!,
                                               completion: counted()))
                instance.writer.submit(.markRead(UserID("ana")!, conversation: ConversationID("c1")!, upTo: Int64.max,
                                                 completion: counted()))
                instance.writer.submit(.append(NewMessage(sender: "ana", body: "m5"), conversation: ConversationID("c3")!,
                                               completion: counted()))
                try holder.execute(sql: "COMMIT")
                await withCheckedContinuation { continuation in group.notify(queue: .global()) { continuation.resume() } }
                #expect(failures.withLock { $0 } == 0)
                for _ in 0..<1_000 where instance.commits.last?.size != 5 { try await Task.sleep(for: .milliseconds(10)) }
                #expect(instance.commits.last?.size == 5)
                // The blocked batch took before + 1.
                #expect(try rows.counters("blocker")[4] == before + 1)
                #expect(try rows.counters("c1")[4] == before + 2)
                #expect(try rows.int64("""
                    SELECT m.activity FROM members m JOIN conversations c ON c.seq = m.conversation_seq
                    WHERE c.id = 'c2' AND m.user_id = 'bo'
                    """) == before + 3)
                #expect(try rows.counters("c2")[4] == before + 3)
                #expect(try rows.int64("""
                    SELECT m.activity FROM members m JOIN conversations c ON c.seq = m.conversation_seq
                    WHERE c.id = 'c1' AND m.user_id = 'ana'
                    """) == before + 5)
                #expect(try rows.counters("c3")[4] == before + 6)
                #expect(try rows.activity() == before + 6)
                #expect(inboxActivities(instance.commits.suffix(1)) == [before + 6])
            }
        }

        @Test func aCounterAtItsEndRefusesOnlyTheRequestsThatNeedAValue() async throws {
            try await withWriter { instance, rows, uri in
                _ = try await instance.create("blocker").get()
                _ = try await instance.create("c1", owner: "ana").get()
                _ = try await instance.create("c2").get()
                let kept = try await instance.append("kept", to: "c1", clientID: "k").get().message
                let c2Activity = try rows.counters("c2")[4]
                let holder = try await holdNextBatch(of: instance, uri: uri)
                // Tampered while the blocked batch waits: it takes the one
                // value before the last.
                try rows.connection.query("UPDATE activity_counter SET value = $1 WHERE id = 1", [.int64(Int64.max - 2)])
                let answers = Mutex<[Int: String]>([:])
                let group = DispatchGroup()
                @Sendable func note(_ index: Int, _ word: String) {
                    answers.withLock { $0[index] = word }
                    group.leave()
                }
                func appended(_ index: Int) -> @Sendable (Result<AppendOutcome, StoreError>) -> Void {
                    group.enter()
                    return { result in
                        switch result {
                        case .success(.created): note(index, "created")
                        case .success(.existing): note(index, "existing")
                        case .failure(let error): note(index, describe(error))
                        }
                    }
                }
                func memberChanged(_ index: Int) -> @Sendable (Result<MemberChange, StoreError>) -> Void {
                    group.enter()
                    return { result in
                        switch result {
                        case .success: note(index, "changed")
                        case .failure(let error): note(index, describe(error))
                        }
                    }
                }
                instance.writer.submit(.append(NewMessage(sender: "ana", body: "last"), conversation: ConversationID("c1")!,
                                               completion: appended(0)))
                instance.writer.submit(.append(NewMessage(sender: "ana", body: "none left"), conversation: ConversationID("c2")!,
                                               completion: appended(1)))
                instance.writer.submit(.append(NewMessage(sender: "ana", body: "kept", clientID: "k"),
                                               conversation: ConversationID("c1")!, completion: appended(2)))
                instance.writer.submit(.putMember(UserID("bo")!, role: .member, conversation: ConversationID("c2")!,
                                                  completion: memberChanged(3)))
                instance.writer.submit(.append(NewMessage(sender: "ana", body: "none either"), conversation: ConversationID("c2")!,
                                               completion: appended(4)))
                try holder.execute(sql: "COMMIT")
                await withCheckedContinuation { continuation in group.notify(queue: .global()) { continuation.resume() } }
                #expect(answers.withLock { $0 } == [0: "created", 1: "impossible", 2: "existing", 3: "impossible", 4: "impossible"])
                #expect(try rows.activity() == Int64.max)
                #expect(try rows.counters("blocker")[4] == Int64.max - 1)
                #expect(try rows.counters("c1")[4] == Int64.max)
                #expect(try rows.counters("c2")[4] == c2Activity)
                #expect(try rows.strings("SELECT body FROM messages ORDER BY id") == ["kept", "waits", "last"])
                #expect(try rows.int64("SELECT count(*) FROM members WHERE user_id = 'bo'") == 0)

                // Batches of their own: an append alone finds no room at its
                // end; a retry by client_id needs no value.
                let later = await instance.append("later", to: "c2")
                if case .failure(let error) = later {
                    #expect(describe(error) == "impossible")
                } else {
                    Issue.record("an append past the counter's end was not refused")
                }
                #expect(try await instance.append("kept", to: "c1", clientID: "k").get() == .existing(kept))
                #expect(try rows.activity() == Int64.max)
            }
        }
    }
}

/// The activity of each inbox notice of these commits, in order.
private func inboxActivities(_ commits: some Sequence<PostgresCommit>) -> [Int64] {
    commits.flatMap(\.notices).compactMap { notice -> Int64? in
        if case .inbox(let activity, _, _) = notice { return activity }
        return nil
    }
}

/// "impossible" for the activity counter's `.impossibleStoredValue`, else
/// the error's description.
private func describe(_ error: StoreError) -> String {
    if case .storage(let failure) = error, failure.message.hasPrefix("the activity counter is at ") { return "impossible" }
    return "\(error)"
}
