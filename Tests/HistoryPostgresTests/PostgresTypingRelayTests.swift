import Dispatch
import HistoryPostgres
import HistoryStore
import HistoryTestSupport
import Synchronization
import Testing

extension PostgresTests {
    /// Typing calls gathered by the relay: many calls decided by one
    /// statement per tick, each answered once and rightly, the accepted
    /// ones relayed once each to the other instances; and a removal made
    /// through another instance seen by the very next call.
    @Suite("PostgresTypingRelay")
    struct PostgresTypingRelayTests {
        private func open(_ uri: String) throws -> PostgresHistoryStore {
            try PostgresHistoryStore(configuration: PostgresStoreConfiguration(uri: uri, readerCount: 2))
        }

        /// What a read of the conversation asks of a user: to be a member.
        private func member(_ user: UserID) -> AccessCheck {
            AccessCheck(user: user) { role, _ in role == nil ? .notAMember : nil }
        }

        private func describe(_ result: Result<Bool, StoreError>) -> String {
            switch result {
            case .success(let accepted): accepted ? "accepted" : "dropped"
            case .failure(.conversationNotFound(let id)): "notFound \(id.rawValue)"
            case .failure(let error): "\(error)"
            }
        }

        @Test(.timeLimit(.minutes(2)))
        func concurrentCallsAreEachAnsweredOnceAndTheAcceptedRelayedOnce() async throws {
            try await withTestDatabase { uri in
                let a = try open(uri), b = try open(uri)
                defer { a.close(); b.close() }
                // Every typing notice on the channel; only a's calls send any here.
                let heard = Mutex<[TypingChange]>([])
                let listener = PostgresChangeListener(uri: uri, onNotices: { notices in
                    for case .typing(let change, _) in notices { heard.withLock { $0.append(change) } }
                }, onGap: {})
                defer { listener.close() }
                try listener.start()

                let rooms = (0..<4).map { ConversationID("room-\($0)")! }
                for room in rooms { _ = try await a.createConversation(id: room) }
                let users = (0..<60).map { UserID("user-\($0)")! }
                for (index, user) in users.enumerated() { try await a.putMember(user, in: rooms[index % 4]) }

                // Each member types in its room, each also in the next room
                // (a stranger there), a few in a room that does not exist,
                // and an administrator's call names no member.
                struct Call { let user: UserID; let room: ConversationID; let access: AccessCheck; let expected: String }
                var calls: [Call] = []
                for (index, user) in users.enumerated() {
                    let own = rooms[index % 4], other = rooms[(index + 1) % 4]
                    calls.append(Call(user: user, room: own, access: member(user), expected: "accepted"))
                    calls.append(Call(user: user, room: other, access: member(user), expected: "notFound \(other.rawValue)"))
                    if index % 10 == 0 {
                        let missing = ConversationID("missing-\(index)")!
                        calls.append(Call(user: user, room: missing, access: member(user), expected: "notFound missing-\(index)"))
                        calls.append(Call(user: user, room: missing, access: .admin, expected: "notFound missing-\(index)"))
                    }
                }
                let robot = UserID("robot")!
                calls.append(Call(user: robot, room: rooms[0], access: .admin, expected: "accepted"))

                let made = calls
                let answers = Mutex<[Int: [String]]>([:])
                let group = DispatchGroup()
                DispatchQueue.concurrentPerform(iterations: calls.count) { index in
                    let call = made[index]
                    group.enter()
                    a.tellTyping(true, as: call.user, in: call.room, access: call.access) { result in
                        answers.withLock { $0[index, default: []].append(describe(result)) }
                        group.leave()
                    }
                }
                await withCheckedContinuation { continuation in group.notify(queue: .global()) { continuation.resume() } }
                #expect(answers.withLock { $0 } == Dictionary(uniqueKeysWithValues: calls.enumerated().map { ($0, [$1.expected]) }))

                // Shown on a at once, on b once relayed; strangers nowhere.
                for (number, room) in rooms.enumerated() {
                    let typers = (users.enumerated().filter { $0.offset % 4 == number }.map(\.element)
                        + (number == 0 ? [robot] : [])).sorted()
                    #expect(a.typers(in: room) == typers)
                    #expect(await eventually { b.typers(in: room) == typers })
                }
                // Every accepted call relayed, and each once (a little more
                // time for a duplicate to show).
                let accepted = calls.filter { $0.expected == "accepted" }
                    .map { TypingChange(conversation: $0.room, user: $0.user, typing: true) }
                #expect(await eventually { heard.withLock { $0.count } >= accepted.count })
                try await Task.sleep(for: .milliseconds(300))
                let relayed = heard.withLock { $0 }
                #expect(relayed.count == accepted.count)
                #expect(Set(relayed) == Set(accepted))
            }
        }

        @Test(.timeLimit(.minutes(2)))
        func aMemberRemovedThroughAnotherInstanceIsRefusedAtTheNextCall() async throws {
            try await withTestDatabase { uri in
                let a = try open(uri), b = try open(uri)
                defer { a.close(); b.close() }
                a.typingBoard.use(TypingTiming(lasts: .seconds(30), quietPeriod: .milliseconds(1)))
                let room = ConversationID("room")!, ana = UserID("ana")!
                _ = try await a.createConversation(id: room)
                try await a.putMember(ana, in: room)
                func tell() async -> String {
                    await withCheckedContinuation { continuation in
                        a.tellTyping(true, as: ana, in: room, access: member(ana)) { continuation.resume(returning: describe($0)) }
                    }
                }
                #expect(await tell() == "accepted")
                #expect(a.typers(in: room) == [ana])
                #expect(await eventually { b.typers(in: room) == [ana] })
                // Removed through b: a has no cache to be stale, the next call reads it.
                #expect(try await b.removeMember(ana, from: room))
                #expect(await tell() == "notFound room")
                // And b's stop reaches a's list (30 s would keep ana otherwise).
                #expect(await eventually { a.typers(in: room) == [] })
            }
        }
    }
}
