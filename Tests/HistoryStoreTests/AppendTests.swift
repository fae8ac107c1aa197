import Dispatch
import HistoryTestSupport
import Synchronization
import Testing
@testable import HistoryStore
@testable import HistorySQLite

@Suite("Appends", .postgresCluster)
struct AppendTests {
    @Test(arguments: StoreBackend.allCases) func appendStoresTheMessageAndBumpsTheVersion(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("c")
            let before = Timestamp.now()
            let outcome = try await store.append(NewMessage(sender: "ana", body: "hello", clientID: "k1"), to: cid("c"))
            guard case .created(let message) = outcome else { Issue.record("not created: \(outcome)"); return }
            #expect(message.sender == "ana")
            #expect(message.body == "hello")
            #expect(message.clientID == "k1")
            #expect(message.conversationID == cid("c"))
            #expect(message.version == 1)
            #expect(!message.deleted)
            #expect(message.editedAt == nil)
            #expect(message.createdAt >= before)
            #expect(try store.message(message.id, in: cid("c")) == message)
            let second = try await store.append(NewMessage(sender: "bo", body: "hi"), to: cid("c")).message
            #expect(second.id > message.id)
            #expect(second.version == 2)
        }
    }

    @Test(arguments: StoreBackend.allCases) func idsAreUniqueAcrossConversations(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("a")
            try await store.make("b")
            var ids: [Int64] = []
            for index in 0..<10 {
                ids.append(try await store.append(NewMessage(sender: "s", body: "\(index)"), to: cid(index % 2 == 0 ? "a" : "b")).message.id)
            }
            #expect(ids == ids.sorted())
            #expect(Set(ids).count == ids.count)
            #expect(throws: StoreError.messageNotFound(cid("b"), messageID: ids[0])) { try store.message(ids[0], in: cid("b")) }
        }
    }

    @Test(arguments: StoreBackend.allCases) func bodyTextIsStoredExactly(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("c")
            // U+0000 too: PostgreSQL keeps this text as its UTF-8 bytes
            // (migrations/postgres/0003_text_bytes.sql), as its text type
            // cannot hold a NUL.
            let tricky = "nul\u{0}inside, emoji 👩‍👩‍👧, quote ' and \"double\""
            let nul = try await store.append(NewMessage(sender: "ü\u{0}nï", body: tricky, clientID: "k\u{0}1"), to: cid("c")).message
            let nulRead = try store.message(nul.id, in: cid("c"))
            #expect(Array(nulRead.body.utf8) == Array(tricky.utf8))
            #expect(Array(nulRead.sender.utf8) == Array("ü\u{0}nï".utf8))
            #expect(nulRead.clientID.map { Array($0.utf8) } == Array("k\u{0}1".utf8))
            let plain = "emoji 👩‍👩‍👧, quote ' and \"double\", back\\slash, {braces}, \t tab"
            let message = try await store.append(NewMessage(sender: "ünï", body: plain), to: cid("c")).message
            let read = try store.message(message.id, in: cid("c"))
            #expect(read.body == plain)
            #expect(read.sender == "ünï")
        }
    }

    @Test(arguments: [
        (NewMessage(sender: "", body: "b"), "sender"),
        (NewMessage(sender: String(repeating: "s", count: 65), body: "b"), "sender"),
        (NewMessage(sender: "s", body: ""), "body"),
        (NewMessage(sender: "s", body: String(repeating: "b", count: 16 * 1024 + 1)), "body"),
        (NewMessage(sender: "s", body: "b", clientID: ""), "client_id"),
        (NewMessage(sender: "s", body: "b", clientID: String(repeating: "k", count: 129)), "client_id"),
        // One character each (a letter under thousands of combining marks),
        // but kilobytes: the byte bound of MessageRules.maximumBytesPerCharacter.
        (NewMessage(sender: "e" + String(repeating: "\u{301}", count: 3_000), body: "b"), "sender"),
        (NewMessage(sender: "s", body: "b", clientID: "k" + String(repeating: "\u{301}", count: 3_000)), "client_id"),
        (NewMessage(sender: "s", body: "b", replyTo: 0), "reply_to"),
        (NewMessage(sender: "s", body: "b", replyTo: -4), "reply_to"),
    ])
    func invalidInputIsRefusedAndNothingStored(message: NewMessage, field: String) async throws {
        try await withTemporaryStore { store in
            try await store.make("c")
            do {
                _ = try await store.append(message, to: cid("c"))
                Issue.record("accepted an invalid \(field)")
            } catch {
                guard case .invalid(let reported, _)? = error as? StoreError else { Issue.record("wrong error \(error)"); return }
                #expect(reported.name == field)
            }
            #expect(try store.conversation(cid("c")).messageCount == 0)
            #expect(try store.conversation(cid("c")).version == 0)
        }
    }

    @Test(arguments: StoreBackend.allCases) func limitsAreInclusive(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("c")
            let message = NewMessage(sender: String(repeating: "é", count: 64),
                                     body: String(repeating: "b", count: 16 * 1024),
                                     clientID: String(repeating: "k", count: 128))
            #expect(try await store.append(message, to: cid("c")).message.body.utf8.count == 16 * 1024)
            // 64 of the longest characters in use (a family emoji is one
            // character of 25 bytes) stay within the byte bound.
            let family = "\u{1F468}\u{200D}\u{1F469}\u{200D}\u{1F467}\u{200D}\u{1F466}"
            #expect(family.count == 1 && family.utf8.count == 25)
            let emojiSender = String(repeating: family, count: 64)
            #expect(try await store.append(NewMessage(sender: emojiSender, body: "b"), to: cid("c")).message.sender == emojiSender)
        }
    }

    @Test(arguments: StoreBackend.allCases) func unknownConversationIsRefused(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            await #expect(throws: StoreError.conversationNotFound(cid("ghost"))) {
                try await store.append(NewMessage(sender: "s", body: "b"), to: cid("ghost"))
            }
        }
    }

    @Test(arguments: StoreBackend.allCases) func replyToMustNameAMessageOfTheSameConversation(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("a")
            try await store.make("b")
            let target = try await store.post(1, to: "a")[0]
            let reply = try await store.append(NewMessage(sender: "s", body: "re", replyTo: target.id), to: cid("a")).message
            #expect(reply.replyTo == target.id)
            await #expect(throws: StoreError.replyTargetNotFound(messageID: target.id)) {
                try await store.append(NewMessage(sender: "s", body: "re", replyTo: target.id), to: cid("b"))
            }
            await #expect(throws: StoreError.replyTargetNotFound(messageID: 999_999)) {
                try await store.append(NewMessage(sender: "s", body: "re", replyTo: 999_999), to: cid("a"))
            }
            // A tombstone is still a message one can reply to.
            _ = try await store.delete(messageID: target.id, in: cid("a"))
            #expect(try await store.append(NewMessage(sender: "s", body: "re", replyTo: target.id), to: cid("a")).message.replyTo == target.id)
            #expect(try store.conversation(cid("b")).messageCount == 0)
        }
    }

    @Test(arguments: StoreBackend.allCases) func aRepeatedClientIDAnswersTheOriginalAndStoresNothing(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("c")
            let message = NewMessage(sender: "ana", body: "once", clientID: "retry-1")
            let first = try await store.append(message, to: cid("c"))
            let again = try await store.append(message, to: cid("c"))
            #expect(again == .existing(first.message))
            let conversation = try store.conversation(cid("c"))
            #expect(conversation.messageCount == 1)
            #expect(conversation.version == 1)
            // The same client_id in another conversation is another message.
            try await store.make("d")
            #expect(try await store.append(message, to: cid("d")) != first)
        }
    }

    @Test(arguments: StoreBackend.allCases) func aClientIDWithAnotherSenderOrBodyConflicts(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("c")
            _ = try await store.append(NewMessage(sender: "ana", body: "one", clientID: "k"), to: cid("c"))
            await #expect(throws: StoreError.clientIDConflict(clientID: "k")) {
                try await store.append(NewMessage(sender: "ana", body: "two", clientID: "k"), to: cid("c"))
            }
            await #expect(throws: StoreError.clientIDConflict(clientID: "k")) {
                try await store.append(NewMessage(sender: "bo", body: "one", clientID: "k"), to: cid("c"))
            }
            // The separator keeps "a"+"bc" and "ab"+"c" apart.
            _ = try await store.append(NewMessage(sender: "a", body: "bc", clientID: "split"), to: cid("c"))
            await #expect(throws: StoreError.clientIDConflict(clientID: "split")) {
                try await store.append(NewMessage(sender: "ab", body: "c", clientID: "split"), to: cid("c"))
            }
            #expect(try store.conversation(cid("c")).messageCount == 2)
        }
    }

    @Test(arguments: StoreBackend.allCases) func aRetryAfterAnEditOrDeleteAnswersTheCurrentState(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("c")
            let original = NewMessage(sender: "ana", body: "first words", clientID: "k")
            let stored = try await store.append(original, to: cid("c")).message
            let edited = try await store.edit(messageID: stored.id, in: cid("c"), body: "better words")
            #expect(try await store.append(original, to: cid("c")) == .existing(edited))
            let tombstone = try await store.delete(messageID: stored.id, in: cid("c"))
            #expect(try await store.append(original, to: cid("c")) == .existing(tombstone))
            // A tombstone answers every retry alike: no oracle for the deleted text.
            #expect(try await store.append(NewMessage(sender: "ana", body: "better words", clientID: "k"), to: cid("c"))
                == .existing(tombstone))
        }
    }

    @Test(arguments: StoreBackend.allCases) func concurrentRetriesOfOneClientIDStoreOneMessage(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("c")
            let message = NewMessage(sender: "ana", body: "flaky network", clientID: "same-key")
            let outcomes = try await withThrowingTaskGroup(of: AppendOutcome.self) { group in
                for _ in 0..<64 {
                    group.addTask { try await store.append(message, to: cid("c")) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let created = outcomes.filter { if case .created = $0 { true } else { false } }
            #expect(created.count == 1)
            #expect(Set(outcomes.map(\.message.id)).count == 1)
            #expect(try store.conversation(cid("c")).messageCount == 1)
        }
    }

    @Test func duplicatesInsideOneBatchAreRecognised() async throws {
        // All submitted before the writer runs: they share a batch.
        try await withTemporaryStore { store in
            try await store.make("c")
            let results = Locked<[Result<AppendOutcome, StoreError>]>([])
            let done = DispatchGroup()
            for index in 0..<20 {
                done.enter()
                let body = index % 2 == 0 ? "same" : "different \(index)"
                store.append(NewMessage(sender: "ana", body: body, clientID: "k"), to: cid("c")) { result in
                    results.withLock { $0.append(result) }
                    done.leave()
                }
            }
            done.wait()
            let all = results.withLock { $0 }
            let ids = Set(all.compactMap { try? $0.get().message.id })
            #expect(ids.count == 1)
            let conflicts = all.filter { $0 == .failure(.clientIDConflict(clientID: "k")) }.count
            let successes = all.count - conflicts
            #expect(successes >= 1)
            #expect(try store.conversation(cid("c")).messageCount == 1)
            // The first stored decides: every answer agrees with it.
            let kept = try store.message(ids.first!, in: cid("c"))
            #expect(conflicts == (kept.body == "same" ? 10 : 19))
        }
    }

    @Test func aBadRequestInABatchFailsAloneAndTheRestCommit() async throws {
        let sizes = Locked<[Int]>([])
        try await withTemporaryStore(onBatchCommitted: { size in sizes.withLock { $0.append(size) } }) { store in
            try await store.make("good")
            let results = Locked<[Int: Result<AppendOutcome, StoreError>]>([:])
            let done = DispatchGroup()
            for index in 0..<40 {
                done.enter()
                let target = index % 4 == 3 ? "missing" : "good"
                let replyTo: Int64? = index % 4 == 2 ? 987_654 : nil
                store.append(NewMessage(sender: "s", body: "\(index)", replyTo: replyTo), to: cid(target)) { result in
                    results.withLock { $0[index] = result }
                    done.leave()
                }
            }
            done.wait()
            let all = results.withLock { $0 }
            for index in 0..<40 {
                switch index % 4 {
                case 3: #expect(all[index] == .failure(.conversationNotFound(cid("missing"))))
                case 2: #expect(all[index] == .failure(.replyTargetNotFound(messageID: 987_654)))
                default: #expect((try? all[index]?.get()) != nil)
                }
            }
            let conversation = try store.conversation(cid("good"))
            #expect(conversation.messageCount == 20)
            #expect(conversation.version == 20)
            #expect(try store.allIDs(of: "good").count == 20)
        }
    }

    @Test func concurrentAppendersAreGroupCommitted() async throws {
        let sizes = Locked<[Int]>([])
        try await withTemporaryStore(durability: .full, onBatchCommitted: { size in sizes.withLock { $0.append(size) } }) { store in
            try await store.make("busy")
            onThreads(32) { thread in
                for index in 0..<20 {
                    let result = store.appendBlocking(NewMessage(sender: "t\(thread)", body: "\(index)"), to: cid("busy"))
                    if case .failure(let error) = result { Issue.record("append failed: \(error)") }
                }
            }
            // One creation plus 640 appends, in fewer transactions than
            // writes. The callback runs after the answers, so the last one
            // may still be on its way.
            #expect(await eventually { sizes.value.reduce(0, +) == 641 })
            let committed = sizes.value
            #expect(committed.max()! > 1)
            #expect(committed.count < 641)
            #expect(try store.conversation(cid("busy")).messageCount == 640)
        }
    }

    @Test(arguments: StoreBackend.allCases) func idsFollowCommitOrderWithinAConversation(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("c")
            onThreads(8) { thread in
                for index in 0..<25 {
                    _ = store.appendBlocking(NewMessage(sender: "t\(thread)", body: "\(index)"), to: cid("c"))
                }
            }
            // Versions are given in commit order: sorted by id, they must ascend too.
            let feed = try store.changes(in: cid("c"), ChangeQuery(since: 0, limit: 1000))
            let byID = feed.events.map(\.message).sorted { $0.id < $1.id }
            #expect(byID.map(\.version) == Array(1...200))
        }
    }

    @Test(arguments: StoreBackend.allCases) func bulkAppendKeepsCountersAndVersions(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("bulk")
            try await store.post(2, to: "bulk")
            let ids = try store.seed(100, to: "bulk")
            #expect(ids.count == 100)
            #expect(ids == ids.sorted())
            let conversation = try store.conversation(cid("bulk"))
            #expect(conversation.messageCount == 102)
            #expect(conversation.newestID == ids.last)
            #expect(conversation.version == 102)
            let last = try store.message(ids.last!, in: cid("bulk"))
            #expect(last.version == 102)
            // Appends after a bulk load continue above it.
            let next = try await store.post(1, to: "bulk")[0]
            #expect(next.id > ids.last!)
            #expect(next.version == 103)
            #expect(try store.bulkLoad([], to: cid("bulk")) == nil)
            #expect(throws: StoreError.conversationNotFound(cid("none"))) {
                try store.bulkLoad([NewMessage(sender: "s", body: "b")], to: cid("none"))
            }
            #expect(throws: StoreError.self) {
                try store.bulkLoad([NewMessage(sender: "s", body: "")], to: cid("bulk"))
            }
            #expect(throws: StoreError.clientIDConflict(clientID: "twice")) {
                try store.bulkLoad([NewMessage(sender: "s", body: "b", clientID: "twice"),
                                      NewMessage(sender: "s", body: "b", clientID: "twice")], to: cid("bulk"))
            }
            #expect(try store.conversation(cid("bulk")).messageCount == 103)
        }
    }

    @Test func idsContinueAfterReopening() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.databasePath
            let configuration = SQLiteStoreConfiguration(path: path, durability: .normal)
            var store = try SQLiteHistoryStore(configuration: configuration)
            try await store.make("c")
            let last = try await store.post(3, to: "c").last!
            store.close()
            store = try SQLiteHistoryStore(configuration: configuration)
            defer { store.close() }
            let next = try await store.post(1, to: "c")[0]
            #expect(next.id == last.id + 1)
            #expect(next.version == 4)
        }
    }
}
