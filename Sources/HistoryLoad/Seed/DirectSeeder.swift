import Dispatch
import HistoryPostgres
import HistoryStore
import HistorySQLite
import Synchronization
import ToolSupport

/// Loads a database directly, bypassing HTTP and group commit: millions of
/// messages in seconds, the same shape (sizes, replies, edits, deletes) as
/// seeding over HTTP, and the same data from the same seed whichever the
/// store. A SQLite file is loaded through the store's bulk loader, a
/// PostgreSQL database (`postgres://...`) with COPY (`PostgresCopyLoad`).
///
/// Run it before starting servers on that database (or while none
/// appends): SQLite allows one writer at a time, and the block of ids a
/// PostgreSQL load takes is only consecutive while nobody else takes ids.
enum DirectSeeder {
    static let chunkSize = 5_000

    /// - Parameter members: user ids made members of every conversation
    ///   (tokens mode's virtual users), through the writer like the server's PUT.
    static func seed(_ plan: SeedPlan, path: String, progress: SeedProgress, members: [String] = []) throws -> HTTPSeeder.Outcome {
        if PostgresStoreConfiguration.isPostgresURI(path) {
            let store: PostgresHistoryStore
            let copy: PostgresCopyLoad
            do {
                // Opening the store migrates the database; one reader is plenty.
                store = try PostgresHistoryStore(configuration: PostgresStoreConfiguration(
                    uri: path, readerCount: 1, applicationName: "history-load"))
                copy = try PostgresCopyLoad(uri: path)
            } catch {
                throw LoadError("cannot open the PostgreSQL database: \(error)")
            }
            defer {
                copy.close()
                store.close()
            }
            return try seed(plan, store: store, loader: CopyMessageLoader(copy: copy), progress: progress, members: members)
        }
        let store: SQLiteHistoryStore
        do {
            store = try SQLiteHistoryStore(configuration: SQLiteStoreConfiguration(path: path, durability: .normal))
        } catch {
            throw LoadError("cannot open \(path): \(error)")
        }
        defer { store.close() }
        return try seed(plan, store: store, loader: BulkMessageLoader(store: store), progress: progress, members: members)
    }

    private static func seed(_ plan: SeedPlan, store: any HistoryStore, loader: any DirectMessageLoader,
                             progress: SeedProgress, members: [String]) throws -> HTTPSeeder.Outcome {
        var outcome = HTTPSeeder.Outcome()

        // Conversations: through the writer, all queued at once, then awaited.
        let created = Mutex<[Result<Void, StoreError>]>([])
        let group = DispatchGroup()
        for index in 0..<plan.conversations {
            guard let id = ConversationID(plan.conversationID(index)) else {
                throw LoadError("\(plan.conversationID(index)) is not a valid conversation id")
            }
            group.enter()
            store.createConversation(id: id, title: "Load test conversation \(index)") { result in
                created.withLock { $0.append(result.map { _ in () }) }
                group.leave()
            }
        }
        group.wait()
        for result in created.withLock({ $0 }) {
            switch result {
            case .success: outcome.conversationsCreated += 1
            case .failure(.conversationExists): outcome.conversationsExisting += 1
            case .failure(let error): throw LoadError("creating a conversation: \(error)")
            }
        }

        try addMembers(members, plan: plan, store: store, outcome: &outcome)

        // Messages: one transaction per chunk; replies point at ids of earlier
        // chunks, so a conversation's first chunks double from one message
        // (1, 1, 2, 4...) up to `chunkSize`: a small conversation gets its
        // replies too, and only its first message has nothing to reply to.
        var changes: [(conversation: ConversationID, id: Int64, delete: Bool)] = []
        for (index, size) in plan.sizes().enumerated() where size > 0 {
            let conversation = ConversationID(plan.conversationID(index))!
            var random = SplitMix64(seed: plan.seed, stream: UInt64(index) + 1)
            var known: [Int64] = []
            var start = 0
            do {
                try loader.begin(conversation, count: size)
            } catch {
                throw LoadError("loading \(conversation): \(error)")
            }
            while start < size {
                let count = min(chunkSize, size - start, max(1, known.count))
                var batch: [NewMessage] = []
                batch.reserveCapacity(count)
                for _ in 0..<count {
                    var replyTo: Int64?
                    if !known.isEmpty, Int.random(in: 0..<100, using: &random) < SeedMix.replyPercent {
                        replyTo = known[Int.random(in: 0..<known.count, using: &random)]
                        outcome.replies += 1
                    }
                    batch.append(NewMessage(sender: TextGenerator.sender(using: &random),
                                            body: TextGenerator.body(using: &random), replyTo: replyTo))
                }
                let ids: ClosedRange<Int64>
                do {
                    ids = try loader.append(batch)
                } catch {
                    throw LoadError("bulk append to \(conversation): \(error)")
                }
                known.append(contentsOf: ids)
                outcome.messages += ids.count
                // About one edit or delete per 100 messages (a chunk of fewer
                // draws for its share), capped so a million-message load stays fast.
                let share = count / 100 + (Int.random(in: 0..<100, using: &random) < count % 100 ? 1 : 0)
                for _ in 0..<share where changes.count < 20_000 {
                    let roll = Int.random(in: 0..<(SeedMix.editPermille + SeedMix.deletePermille), using: &random)
                    changes.append((conversation, Int64.random(in: ids, using: &random), roll >= SeedMix.editPermille))
                }
                progress.add(count)
                start += count
            }
            do {
                try loader.finish()
            } catch {
                throw LoadError("loading \(conversation): \(error)")
            }
        }

        // Edits and deletes through the writer, all queued, so group commit batches them.
        let results = Mutex((edits: 0, deletes: 0, failures: [String: Int]()))
        for change in changes {
            group.enter()
            let done: @Sendable (Result<Message, StoreError>) -> Void = { result in
                results.withLock { counts in
                    switch result {
                    case .success where change.delete: counts.deletes += 1
                    case .success: counts.edits += 1
                    case .failure(.messageDeleted): break
                    case .failure(let error): counts.failures["\(change.delete ? "delete" : "edit"): \(error)", default: 0] += 1
                    }
                }
                group.leave()
            }
            if change.delete {
                store.delete(messageID: change.id, in: change.conversation, completion: done)
            } else {
                store.edit(messageID: change.id, in: change.conversation, body: "edited while seeding", completion: done)
            }
        }
        group.wait()
        let counts = results.withLock { $0 }
        outcome.edits = counts.edits
        outcome.deletes = counts.deletes
        outcome.failures.merge(counts.failures, uniquingKeysWith: +)
        return outcome
    }

    /// Every user in every conversation, all queued at once so group commit
    /// batches them; idempotent, so seeding again adds nothing.
    private static func addMembers(_ members: [String], plan: SeedPlan, store: any HistoryStore,
                                   outcome: inout HTTPSeeder.Outcome) throws {
        guard !members.isEmpty else { return }
        let users = try members.map { text in
            guard let user = UserID(text) else { throw LoadError("\(text) is not a valid user id") }
            return user
        }
        let counts = Mutex((added: 0, existing: 0, failures: [String: Int]()))
        let group = DispatchGroup()
        for index in 0..<plan.conversations {
            let conversation = ConversationID(plan.conversationID(index))!
            for user in users {
                group.enter()
                store.putMember(user, role: .member, in: conversation) { result in
                    counts.withLock { counts in
                        switch result {
                        case .success(.added): counts.added += 1
                        case .success: counts.existing += 1
                        case .failure(let error): counts.failures["add member: \(error)", default: 0] += 1
                        }
                    }
                    group.leave()
                }
            }
        }
        group.wait()
        let final = counts.withLock { $0 }
        outcome.membersAdded += final.added
        outcome.membersExisting += final.existing
        outcome.failures.merge(final.failures, uniquingKeysWith: +)
    }
}
