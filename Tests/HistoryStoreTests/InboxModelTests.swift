import HistoryTestSupport
import Testing
@testable import HistoryStore

/// The inbox against a plain model of the same operations: thousands of
/// random posts, bulk loads, edits, deletes, marker moves, joins and leaves
/// from several users, with every user's inbox walked page by page and
/// every user feed read after each round. Seeded: a failure replays.
@Suite("Inbox against a model", .postgresCluster)
struct InboxModelTests {
    struct ModelMessage {
        var id: Int64
        var sender: String
        var body: String
        var deleted = false
    }

    struct ModelMember {
        var role: MemberRole
        var lastReadID: Int64?
    }

    struct ModelConversation {
        var messages: [ModelMessage] = []
        var members: [String: ModelMember] = [:]
    }

    /// What a row must show, computed the slow, obvious way.
    struct ExpectedRow: Equatable {
        var conversation: String
        var role: MemberRole
        var lastMessageID: Int64?
        var lastMessageBody: String?
        var lastMessageDeleted: Bool?
        var read: ReadState

        init(_ row: InboxRow) {
            conversation = row.conversation.id.rawValue
            role = row.role
            lastMessageID = row.lastMessage?.id
            lastMessageBody = row.lastMessage?.body
            lastMessageDeleted = row.lastMessage?.deleted
            read = row.read
        }

        init(conversation: String, model: ModelConversation, user: String) {
            let member = model.members[user]!
            self.conversation = conversation
            role = member.role
            let last = model.messages.last
            lastMessageID = last?.id
            lastMessageBody = last?.body
            lastMessageDeleted = last?.deleted
            read = InboxModelTests.readState(model, user: user)
        }
    }

    static func readState(_ conversation: ModelConversation, user: String) -> ReadState {
        let marker = conversation.members[user]?.lastReadID
        let unread = conversation.messages.filter { $0.id > (marker ?? 0) && !$0.deleted && $0.sender != user }
        return ReadState(lastReadID: marker, firstUnreadID: unread.first?.id,
                         unreadCount: min(unread.count, ReadState.unreadCap), unreadCapped: unread.count > ReadState.unreadCap)
    }

    struct Model {
        var conversations: [String: ModelConversation] = [:]
        /// Per user, the conversations changed for it since its last feed read.
        var touched: [String: Set<String>] = [:]

        /// Every current member sees a change to the conversation.
        mutating func touch(_ conversation: String) {
            for user in conversations[conversation]!.members.keys { touched[user, default: []].insert(conversation) }
        }

        func inbox(of user: String) -> [ExpectedRow] {
            let mine = conversations.filter { $0.value.members[user] != nil }
            let withMessages = mine.filter { !$0.value.messages.isEmpty }
                .sorted { $0.value.messages.last!.id > $1.value.messages.last!.id }
            let empty = mine.filter { $0.value.messages.isEmpty }
                .sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
            return (withMessages + empty).map { ExpectedRow(conversation: $0.key, model: $0.value, user: user) }
        }
    }

    static let users = ["ana", "bob", "cy", "dee", "big"]

    @Test(arguments: [UInt64(13), 2026], StoreBackend.allCases)
    func randomOperationsMatchTheModel(seed: UInt64, backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            var random = SplitMix64(seed: seed)
            var model = Model()
            var shared: [String] = []
            var since: [String: Int64] = [:]
            for user in Self.users { since[user] = 0 }

            func create(_ name: String, owner: String?) async throws {
                _ = try await store.createConversation(id: cid(name), title: nil, owner: owner.map(uid))
                var conversation = ModelConversation()
                if let owner {
                    conversation.members[owner] = ModelMember(role: .owner)
                    model.touched[owner, default: []].insert(name)
                }
                model.conversations[name] = conversation
            }
            for index in 0..<12 {
                let name = "room\(index)"
                try await create(name, owner: index % 3 == 0 ? nil : Self.users.randomElement(using: &random))
                shared.append(name)
            }
            // More than the 256 a page reads whole: big's pages walk the order.
            for index in 0..<270 { try await create("big\(index)", owner: "big") }
            let all = Array(model.conversations.keys).sorted()

            var checks = 0
            for step in 0..<2500 {
                if step > 0, step % 250 == 0 {
                    try check(store, model: &model, since: &since, random: &random, step: step)
                    checks += 1
                }
                let name = Int.random(in: 0..<10, using: &random) < 7 ? shared.randomElement(using: &random)!
                    : all.randomElement(using: &random)!
                let user = Self.users.randomElement(using: &random)!
                let roll = Int.random(in: 0..<100, using: &random)
                switch roll {
                case 0..<35:
                    let sender = Int.random(in: 0..<4, using: &random) == 0 ? "zed" : user
                    let body = "post \(step)"
                    let message = try await store.append(NewMessage(sender: sender, body: body), to: cid(name)).message
                    model.conversations[name]!.messages.append(ModelMessage(id: message.id, sender: sender, body: body))
                    model.touch(name)
                case 35..<37:
                    let count = Int.random(in: 400...1100, using: &random)
                    let sender = Int.random(in: 0..<3, using: &random) == 0 ? user : "seed"
                    let ids = try #require(try store.bulkLoad((0..<count).map { NewMessage(sender: sender, body: "bulk \($0)") }, to: cid(name)))
                    for (offset, id) in ids.enumerated() {
                        model.conversations[name]!.messages.append(ModelMessage(id: id, sender: sender, body: "bulk \(offset)"))
                    }
                    model.touch(name)
                case 37..<45:
                    guard let index = model.conversations[name]!.messages.indices.randomElement(using: &random) else { continue }
                    let target = model.conversations[name]!.messages[index]
                    if target.deleted { continue }
                    _ = try await store.edit(messageID: target.id, in: cid(name), body: "edited \(step)")
                    model.conversations[name]!.messages[index].body = "edited \(step)"
                    model.touch(name)
                case 45..<53:
                    guard let index = model.conversations[name]!.messages.indices.randomElement(using: &random) else { continue }
                    let target = model.conversations[name]!.messages[index]
                    _ = try await store.delete(messageID: target.id, in: cid(name))
                    if !target.deleted {
                        model.conversations[name]!.messages[index].deleted = true
                        model.conversations[name]!.messages[index].body = ""
                        model.touch(name)
                    }
                case 53..<75:
                    let conversation = model.conversations[name]!
                    let marker = conversation.members[user]?.lastReadID
                    let newest = conversation.messages.last?.id
                    let upTo: Int64 = switch Int.random(in: 0..<5, using: &random) {
                    case 0: 0
                    case 1: conversation.messages.randomElement(using: &random)?.id ?? 1
                    case 2: (newest ?? 0) + Int64.random(in: 1...3, using: &random)
                    case 3: Int64.max
                    default: max(0, (marker ?? 1) - 1)
                    }
                    guard conversation.members[user] != nil else {
                        await #expect(throws: StoreError.memberNotFound(cid(name), uid(user))) {
                            try await store.markRead(uid(user), in: cid(name), upTo: upTo)
                        }
                        continue
                    }
                    let answer = try await store.markRead(uid(user), in: cid(name), upTo: upTo)
                    if let newest {
                        let target = min(upTo, newest)
                        // 0 reads nothing: from null to 0 is no move (docs/API.md).
                        if target > (marker ?? 0) {
                            model.conversations[name]!.members[user]!.lastReadID = target
                            model.touched[user, default: []].insert(name)
                        }
                    }
                    #expect(answer == Self.readState(model.conversations[name]!, user: user), "step \(step)")
                    if let marker { #expect(answer.lastReadID.map { $0 >= marker } == true, "never back") }
                case 75..<88:
                    let role: MemberRole = Int.random(in: 0..<4, using: &random) == 0 ? .owner : .member
                    let change = try await store.putMember(uid(user), role: role, in: cid(name))
                    switch model.conversations[name]!.members[user]?.role {
                    case nil:
                        #expect({ if case .added = change { true } else { false } }(), "step \(step): \(change)")
                        model.conversations[name]!.members[user] = ModelMember(role: role)
                        model.touch(name)
                    case role:
                        #expect({ if case .unchanged = change { true } else { false } }(), "step \(step): \(change)")
                    default:
                        #expect({ if case .changed = change { true } else { false } }(), "step \(step): \(change)")
                        model.conversations[name]!.members[user]!.role = role
                        model.touch(name)
                    }
                case 88..<97:
                    let removed = try await store.removeMember(uid(user), from: cid(name))
                    #expect(removed == (model.conversations[name]!.members[user] != nil), "step \(step)")
                    if removed {
                        model.touch(name)
                        model.conversations[name]!.members[user] = nil
                    }
                default:
                    let created = "new\(step)"
                    try await create(created, owner: Int.random(in: 0..<2, using: &random) == 0 ? user : nil)
                    shared.append(created)
                }
            }
            try check(store, model: &model, since: &since, random: &random, step: -1)
            // The run did reach the capped count somewhere, or it proved little.
            let capped = model.conversations.values.contains { conversation in
                conversation.members.keys.contains { Self.readState(conversation, user: $0).unreadCapped }
            }
            #expect(capped)
            #expect(checks == 9)
        }
    }

    /// Every user's inbox, walked in pages of a random size, equals the
    /// model's; its feed since the last check names exactly the
    /// conversations the model changed for it, as rows equal to the
    /// inbox's or as removals.
    private func check(_ store: any HistoryStore, model: inout Model, since: inout [String: Int64],
                       random: inout SplitMix64, step: Int) throws {
        for user in Self.users {
            let rows = try store.wholeInbox(of: user, limit: Int.random(in: 1...9, using: &random))
            let expected = model.inbox(of: user)
            #expect(rows.map(ExpectedRow.init) == expected, "step \(step), \(user)")
            for row in rows { #expect(row.lastMessage?.id == row.conversation.newestID) }
            let byConversation = Dictionary(uniqueKeysWithValues: rows.map { ($0.conversation.id.rawValue, $0) })

            let (events, activity) = try store.wholeFeed(of: user, since: since[user]!, limit: Int.random(in: 1...6, using: &random))
            #expect(Set(events.map(\.conversationID.rawValue)).count == events.count, "one event per conversation")
            #expect(Set(events.map(\.conversationID.rawValue)) == model.touched[user, default: []], "step \(step), \(user)")
            for event in events {
                switch event {
                case .updated(let row):
                    #expect(row == byConversation[row.conversation.id.rawValue], "step \(step), \(user)")
                case .removed(let id, _):
                    #expect(byConversation[id.rawValue] == nil, "removed while a member: \(id)")
                }
            }
            since[user] = activity
            model.touched[user] = []
        }
    }
}
