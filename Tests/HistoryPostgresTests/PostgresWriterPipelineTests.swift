import Dispatch
import Foundation
import HistoryPostgres
import HistoryStore
import HistoryTestSupport
import Synchronization
import Testing

extension PostgresTests {
    /// The batch's first round trip is one pipeline (BEGIN, the locks, the
    /// callers' roles, the stored client_ids): what each request is
    /// answered, the order of ids and versions, and a session lost in it.
    @Suite("PostgresWriter pipeline")
    struct PostgresWriterPipelineTests {
        /// Refusals decided from what the pipeline prefetched (roles,
        /// client_ids) among appends that succeed: each answered on its own,
        /// only the good ones stored, in request order.
        @Test func refusedAppendsAmongGoodOnesAreAnsweredEachAndLeaveNothing() async throws {
            try await withWriter { instance, rows, uri in
                _ = try await instance.create("blocker").get()
                _ = try await instance.create("c", owner: "bo").get()
                _ = try await instance.create("d", owner: "zed").get()
                let earlier = try await instance.append("kept", to: "c", sender: "bo", clientID: "k0").get().message

                let holder = try await holdNextBatch(of: instance, uri: uri)
                let answers = Mutex<[Int: String]>([:])
                let group = DispatchGroup()
                let membersOnly = { (user: String) in
                    AccessCheck(user: UserID(user)!) { role, _ in role == nil ? .notAMember : nil }
                }
                let plan: [(conversation: String, user: String, body: String, clientID: String?, expected: String)] = [
                    ("c", "bo", "one", "k1", "created one"),
                    ("c", "zed", "intruder", nil, "conversationNotFound"),
                    ("c", "bo", "kept", "k0", "existing kept"),
                    ("c", "bo", "changed", "k0", "clientIDConflict"),
                    ("nowhere", "bo", "lost", nil, "conversationNotFound"),
                    ("d", "zed", "two", "k1", "created two"),
                    ("c", "bo", "three", nil, "created three"),
                    ("c", "bo", "one", "k1", "existing one"),
                    ("d", "bo", "not in d", "k2", "conversationNotFound"),
                ]
                for (index, item) in plan.enumerated() {
                    group.enter()
                    instance.writer.submit(.append(NewMessage(sender: item.user, body: item.body, clientID: item.clientID),
                                                   conversation: ConversationID(item.conversation)!,
                                                   access: membersOnly(item.user)) { result in
                        answers.withLock { $0[index] = describe(result) }
                        group.leave()
                    })
                }
                try holder.execute(sql: "COMMIT")
                await withCheckedContinuation { continuation in group.notify(queue: .global()) { continuation.resume() } }

                #expect(answers.withLock { $0 } == Dictionary(uniqueKeysWithValues: plan.enumerated().map { ($0, $1.expected) }))
                for _ in 0..<1_000 where instance.commits.count < 6 { try await Task.sleep(for: .milliseconds(10)) }
                #expect(instance.commits.suffix(2).map(\.size) == [1, plan.count])
                #expect(try rows.strings("""
                    SELECT body FROM messages WHERE conversation_seq = (SELECT seq FROM conversations WHERE id = 'c') ORDER BY id
                    """) == ["kept", "one", "three"])
                #expect(try rows.int64s("""
                    SELECT version FROM messages WHERE conversation_seq = (SELECT seq FROM conversations WHERE id = 'c') ORDER BY id
                    """) == [1, 2, 3])
                #expect(try rows.counters("c")[0] == 3)
                #expect(try rows.counters("c")[3] == 3)
                #expect(try rows.strings("""
                    SELECT body FROM messages WHERE conversation_seq = (SELECT seq FROM conversations WHERE id = 'd')
                    """) == ["two"])
                #expect(try rows.int64("SELECT count(*) FROM messages WHERE body <> 'waits'") == 4)
                #expect(earlier.version == 1)
            }
        }

        /// Hundreds of appends in one batch over two conversations: ids in
        /// request order, versions without a gap, one activity value each.
        @Test func aBatchOfManyAppendsKeepsTheirOrderAndVersions() async throws {
            try await withTestDatabase { uri in
                try WriterInstance.migrate(uri)
                let instance = WriterInstance(uri: uri, maximumBatchSize: 1_000)
                defer { instance.close() }
                let rows = try Rows(uri)
                _ = try await instance.create("blocker").get()
                _ = try await instance.create("c").get()
                _ = try await instance.create("d").get()
                let activityBefore = try rows.activity()

                let holder = try await holdNextBatch(of: instance, uri: uri)
                let count = 600
                let ids = Mutex<[Int: Int64]>([:])
                let group = DispatchGroup()
                for index in 0..<count {
                    group.enter()
                    let clientID = index % 3 == 0 ? "k\(index)" : nil
                    instance.writer.submit(.append(NewMessage(sender: "ana", body: "m\(index)", clientID: clientID),
                                                   conversation: ConversationID(index % 2 == 0 ? "c" : "d")!) { result in
                        if case .success(.created(let message)) = result { ids.withLock { $0[index] = message.id } }
                        group.leave()
                    })
                }
                try holder.execute(sql: "COMMIT")
                await withCheckedContinuation { continuation in group.notify(queue: .global()) { continuation.resume() } }

                let given = ids.withLock { $0 }
                #expect(given.count == count)
                let inOrder = (0..<count).compactMap { given[$0] }
                #expect(inOrder == inOrder.sorted())
                for _ in 0..<1_000 where instance.commits.count < 5 { try await Task.sleep(for: .milliseconds(10)) }
                #expect(instance.commits.suffix(2).map(\.size) == [1, count])
                for (conversation, parity) in [("c", 0), ("d", 1)] {
                    let seq = try #require(try rows.int64("SELECT seq FROM conversations WHERE id = $1", [.text(conversation)]))
                    #expect(try rows.strings("SELECT body FROM messages WHERE conversation_seq = $1 ORDER BY id", [.int64(seq)])
                        == stride(from: parity, to: count, by: 2).map { "m\($0)" })
                    #expect(try rows.int64s("SELECT version FROM messages WHERE conversation_seq = $1 ORDER BY id", [.int64(seq)])
                        == Array(1...Int64(count / 2)))
                    #expect(try rows.counters(conversation)[0] == Int64(count / 2))
                }
                #expect(try rows.activity() == activityBefore + 1 + Int64(count))
                // The blocked append's, then one per append of the batch, each in the change log once.
                #expect(try rows.int64("SELECT count(*) FROM change_log WHERE activity > $1", [.int64(activityBefore)])
                    == Int64(count + 1))
                #expect(try rows.int64("SELECT count(DISTINCT activity) FROM change_log WHERE activity > $1", [.int64(activityBefore)])
                    == Int64(count + 1))
            }
        }

        /// The session ends while the batch's pipeline waits for a
        /// conversation's lock: nothing was written, so the batch is written
        /// on a new session once the lock is free, each append once.
        @Test func aSessionLostInTheLockPipelineIsReplacedAndTheBatchWrittenOnce() async throws {
            try await withWriter { instance, rows, uri in
                _ = try await instance.create("c", owner: "bo").get()
                let holder = try PGConnection(uri: uri)
                try holder.execute(sql: "BEGIN")
                try holder.query("SELECT 1 FROM conversations WHERE id = 'c' FOR UPDATE")

                let answers = Mutex<[Int: String]>([:])
                let group = DispatchGroup()
                for index in 0..<10 {
                    group.enter()
                    instance.writer.submit(.append(NewMessage(sender: "bo", body: "m\(index)", clientID: "k\(index)"),
                                                   conversation: ConversationID("c")!,
                                                   access: AccessCheck(user: UserID("bo")!) { role, _ in
                                                       role == nil ? .notAMember : nil
                                                   }) { result in
                        answers.withLock { $0[index] = describe(result) }
                        group.leave()
                    })
                }
                let first = try #require(try await lockWaiter(rows, otherThan: nil))
                #expect(try rows.connection.query("SELECT pg_terminate_backend($1::integer, 10000)", [.int32(Int32(first))]).bool(0, 0))
                // Written again on a new session, which waits for the lock in turn.
                let second = try #require(try await lockWaiter(rows, otherThan: first))
                #expect(second != first)
                #expect(answers.withLock { $0.isEmpty })
                try holder.execute(sql: "COMMIT")
                await withCheckedContinuation { continuation in group.notify(queue: .global()) { continuation.resume() } }

                #expect(answers.withLock { $0 } == Dictionary(uniqueKeysWithValues: (0..<10).map { ($0, "created m\($0)") }))
                #expect(try rows.int64s("SELECT version FROM messages ORDER BY id") == Array(1...10))
                #expect(try await instance.append("after", to: "c", sender: "bo").get().message.version == 11)
            }
        }
    }
}

/// The backend of this database waiting for a lock (not `otherThan`), polled for up to 30 s.
private func lockWaiter(_ rows: Rows, otherThan excluded: Int64?) async throws -> Int64? {
    for _ in 0..<3_000 {
        if let pid = try rows.int64("""
            SELECT pid FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> coalesce($1, 0)
            """, [excluded.map(PostgresValue.int64) ?? .null]) {
            return pid
        }
        try await Task.sleep(for: .milliseconds(10))
    }
    return nil
}

private func describe(_ result: Result<AppendOutcome, StoreError>) -> String {
    switch result {
    case .success(.created(let message)): "created " + message.body
    case .success(.existing(let message)): "existing " + message.body
    case .failure(.conversationNotFound): "conversationNotFound"
    case .failure(.clientIDConflict): "clientIDConflict"
    case .failure(let error): "\(error)"
    }
}
