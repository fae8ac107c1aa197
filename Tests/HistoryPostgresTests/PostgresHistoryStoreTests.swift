import Dispatch
import HistoryPostgres
import HistoryStore
import HistorySQLite
import HistoryTestSupport
import Synchronization
import Testing

extension PostgresTests {
    /// Two `PostgresHistoryStore`s on one database, as two instances would
    /// hold them: what one writes, the other reads and is woken by.
    @Suite("PostgresHistoryStore, two instances")
    struct PostgresHistoryStoreTests {
        private func open(_ uri: String) throws -> PostgresHistoryStore {
            try PostgresHistoryStore(configuration: PostgresStoreConfiguration(uri: uri, readerCount: 4))
        }

        @Test(.timeLimit(.minutes(2)))
        func concurrentAppendsThroughBothKeepIDsInCommitOrder() async throws {
            try await withTestDatabase { uri in
                let first = try open(uri)
                defer { first.close() }
                let second = try open(uri)
                defer { second.close() }
                let room = ConversationID("room")!
                _ = try await first.createConversation(id: room)
                let stores = [first, second]
                let ids = Locked<[Int64]>([])
                let failures = Locked<[String]>([])
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for writer in 0..<8 {
                        group.addTask {
                            for number in 0..<40 {
                                do {
                                    let outcome = try await stores[writer % 2].append(
                                        NewMessage(sender: "w\(writer)", body: "\(number)"), to: room)
                                    ids.withLock { $0.append(outcome.message.id) }
                                } catch {
                                    failures.withLock { $0.append("\(error)") }
                                }
                            }
                        }
                    }
                    try await group.waitForAll()
                }
                #expect(failures.value == [])
                let answered = ids.value.sorted()
                #expect(answered.count == 320)
                for store in stores {
                    var seen: [Int64] = []
                    var after: Int64 = 0
                    while true {
                        let page = try store.page(of: room, PageQuery(cursor: .after(after), limit: 200))
                        guard let last = page.messages.last else { break }
                        seen += page.messages.map(\.id)
                        after = last.id
                    }
                    #expect(seen == answered)
                    #expect(try store.conversation(room).messageCount == 320)
                }
            }
        }

        @Test(.timeLimit(.minutes(1)))
        func aWaitOnOneIsWokenByACommitThroughTheOther() async throws {
            try await withTestDatabase { uri in
                let first = try open(uri)
                defer { first.close() }
                let second = try open(uri)
                defer { second.close() }
                let room = ConversationID("room")!
                let created = try await first.createConversation(id: room)
                let outcome = Mutex<WaitOutcome?>(nil)
                _ = first.waitForChange(in: room, after: created.version, timeout: .seconds(600)) { result in
                    outcome.withLock { $0 = result }
                }
                #expect(first.parkedWaitCount == 1)
                _ = try await second.append(NewMessage(sender: "ana", body: "hi"), to: room)
                #expect(await eventually { outcome.withLock { $0 } == .changed })
            }
        }

        @Test(.timeLimit(.minutes(1)))
        func aLostListenerWakesEveryParkedWait() async throws {
            try await withTestDatabase { uri in
                let store = try open(uri)
                defer { store.close() }
                let room = ConversationID("room")!
                let created = try await store.createConversation(id: room)
                let outcome = Mutex<WaitOutcome?>(nil)
                _ = store.waitForChange(in: room, after: created.version, timeout: .seconds(600)) { result in
                    outcome.withLock { $0 = result }
                }
                let inbox = Mutex<WaitOutcome?>(nil)
                _ = store.waitForInboxChange(of: UserID("ana")!, after: 1_000, timeout: .seconds(600)) { result in
                    inbox.withLock { $0 = result }
                }
                #expect(store.parkedWaitCount == 2)
                let admin = try PGConnection(uri: uri)
                #expect(try admin.query("SELECT pg_terminate_backend($1)", [.int32(store.listenerBackendPID)]).bool(0, 0))
                #expect(await eventually { outcome.withLock { $0 } == .changed && inbox.withLock { $0 } == .changed })
                #expect(store.isListening)
            }
        }
    }
}
