import Foundation
import HistoryClient

/// A simple model of one user's inbox on a server: conversations with their
/// messages, the user's memberships and read marker, and the server-wide
/// activity counter, with the contract's inbox page and feed computed from
/// it by brute force (sort everything, filter). It stands in for the server
/// in Inbox's tests.
struct SimulatedInbox {
    static let user = "me"

    struct Conversation {
        let id: String
        var messages: [HistoryMessage] = []
        var version: Int64 = 0
        var activity: Int64 = 0
        /// Nil: not a member (never was, or left).
        var role: HistoryMemberRole?
        var lastReadID: Int64?
        var memberActivity: Int64 = 0
        /// When the membership ended, while it stays ended.
        var removedAt: Int64?
    }

    private(set) var conversations: [String: Conversation] = [:]
    private(set) var activity: Int64 = 0
    private var lastMessageID: Int64 = 0
    private var nextConversation = 0
    /// Every state each row ever had, to check a row the inbox holds is a real one.
    private(set) var history: [String: Set<HistoryInboxRow>] = [:]

    var memberIDs: [String] { conversations.values.filter { $0.role != nil }.map(\.id).sorted() }
    var allIDs: [String] { conversations.keys.sorted() }

    // MARK: - Changes

    /// A new conversation with the user in it (or not), empty.
    @discardableResult
    mutating func createConversation(member: Bool = true) -> String {
        nextConversation += 1
        let id = String(format: "c%03d", nextConversation)
        activity += 1
        conversations[id] = Conversation(id: id, activity: activity, role: member ? .member : nil,
                                         memberActivity: member ? activity : 0)
        record(id)
        return id
    }

    mutating func post(in id: String, sender: String, gap: Int64 = 1) {
        lastMessageID += max(1, gap)
        activity += 1
        conversations[id]!.version += 1
        let message = HistoryMessage(id: lastMessageID, conversationID: id, sender: sender, body: "m\(lastMessageID)",
                                     createdAt: Date(timeIntervalSince1970: Double(lastMessageID)),
                                     version: conversations[id]!.version)
        conversations[id]!.messages.append(message)
        conversations[id]!.activity = activity
        record(id)
    }

    mutating func edit(in id: String, at index: Int) {
        guard conversations[id]!.messages.indices.contains(index),
              !conversations[id]!.messages[index].deleted else { return }
        activity += 1
        conversations[id]!.version += 1
        conversations[id]!.messages[index].body += "'"
        conversations[id]!.messages[index].version = conversations[id]!.version
        conversations[id]!.activity = activity
        record(id)
    }

    mutating func delete(in id: String, at index: Int) {
        guard conversations[id]!.messages.indices.contains(index),
              !conversations[id]!.messages[index].deleted else { return }
        activity += 1
        conversations[id]!.version += 1
        conversations[id]!.messages[index].body = ""
        conversations[id]!.messages[index].deleted = true
        conversations[id]!.messages[index].version = conversations[id]!.version
        conversations[id]!.activity = activity
        record(id)
    }

    /// Forward only, clamped to the newest message; a marker that does not move takes no activity.
    mutating func markRead(in id: String, upTo messageID: Int64) {
        guard conversations[id]!.role != nil, let newest = conversations[id]!.messages.last?.id else { return }
        let target = min(messageID, newest)
        guard target > (conversations[id]!.lastReadID ?? -1) else { return }
        activity += 1
        conversations[id]!.lastReadID = target
        conversations[id]!.memberActivity = activity
        record(id)
    }

    mutating func join(_ id: String, role: HistoryMemberRole = .member) {
        guard conversations[id]!.role != role else { return }
        activity += 1
        if conversations[id]!.role == nil { conversations[id]!.lastReadID = nil }
        conversations[id]!.role = role
        conversations[id]!.removedAt = nil
        conversations[id]!.memberActivity = activity
        // A member-list change is a change of the conversation too.
        conversations[id]!.activity = activity
        record(id)
    }

    mutating func leave(_ id: String) {
        guard conversations[id]!.role != nil else { return }
        activity += 1
        conversations[id]!.role = nil
        conversations[id]!.removedAt = activity
        conversations[id]!.activity = activity
    }

    private mutating func record(_ id: String) {
        if let row = row(id) { history[id, default: []].insert(row) }
    }

    // MARK: - The contract's reads

    /// The user's current row of a conversation, nil when not a member.
    func row(_ id: String) -> HistoryInboxRow? {
        guard let conversation = conversations[id], let role = conversation.role else { return nil }
        let messages = conversation.messages
        let unread = messages.filter {
            $0.id > (conversation.lastReadID ?? .min) && !$0.deleted && $0.sender != Self.user
        }
        let read = HistoryReadState(lastReadID: conversation.lastReadID, firstUnreadID: unread.first?.id,
                                    unreadCount: min(unread.count, HistoryReadState.unreadCap),
                                    unreadCapped: unread.count > HistoryReadState.unreadCap)
        let summary = HistoryConversation(
            id: id, title: nil, createdAt: Date(timeIntervalSince1970: 0), messageCount: Int64(messages.count),
            oldestID: messages.first?.id, newestID: messages.last?.id, version: conversation.version)
        return HistoryInboxRow(conversation: summary, role: role, lastMessage: messages.last, read: read,
                               activity: max(conversation.activity, conversation.memberActivity))
    }

    /// Every row of the user, in the contract's order.
    var sortedRows: [HistoryInboxRow] {
        memberIDs.compactMap(row).sorted(by: Self.precedes)
    }

    static func precedes(_ lhs: HistoryInboxRow, _ rhs: HistoryInboxRow) -> Bool {
        switch (lhs.lastMessage?.id, rhs.lastMessage?.id) {
        case let (left?, right?): left > right
        case (.some, nil): true
        case (nil, .some): false
        case (nil, nil): lhs.conversation.id < rhs.conversation.id
        }
    }

    /// The keyset page after `cursor`; the cursor is this model's own text,
    /// opaque to the inbox: the last row's conversation id and last message id.
    func page(cursor: String?, limit: Int) -> HistoryInboxPage {
        var rows = sortedRows
        if let cursor {
            let parts = cursor.split(separator: ":", omittingEmptySubsequences: false)
            let conversationID = String(parts[1])
            let messageID = Int64(parts[2])
            let probe = HistoryInboxRow(
                conversation: HistoryConversation(id: conversationID, title: nil, createdAt: Date(), messageCount: 0,
                                                  oldestID: nil, newestID: nil, version: 0),
                role: .member,
                lastMessage: messageID.map { HistoryMessage(id: $0, conversationID: conversationID, sender: "",
                                                            body: "", createdAt: Date(), version: 0) },
                read: HistoryReadState(lastReadID: nil, firstUnreadID: nil, unreadCount: 0, unreadCapped: false),
                activity: 0)
            rows = rows.filter { Self.precedes(probe, $0) }
        }
        let chosen = Array(rows.prefix(limit))
        let next = rows.count > limit ? chosen.last.map { "k:\($0.conversation.id):\($0.lastMessage.map { String($0.id) } ?? "")" } : nil
        return HistoryInboxPage(conversations: chosen, nextCursor: next, activity: activity)
    }

    /// Compacted: each row changed after `since` once (its current state),
    /// and each membership ended after it, ascending by activity.
    func events(since: Int64, limit: Int = 100) -> HistoryInboxEventBatch {
        var changed: [HistoryInboxEvent] = []
        for conversation in conversations.values {
            if let row = row(conversation.id), row.activity > since {
                changed.append(.updated(row))
            } else if let removedAt = conversation.removedAt, removedAt > since {
                changed.append(.removed(conversationID: conversation.id, activity: removedAt))
            }
        }
        changed.sort { $0.activity < $1.activity }
        let chosen = Array(changed.prefix(limit))
        let hasMore = changed.count > limit
        return HistoryInboxEventBatch(events: chosen, hasMore: hasMore,
                                      activity: hasMore ? (chosen.last?.activity ?? since) : activity)
    }

    /// A has_more chain joined, as ``InboxFeed/Batches`` yields it.
    func coalescedEvents(since: Int64, limit: Int) -> HistoryInboxEventBatch {
        var events: [HistoryInboxEvent] = []
        var position = since
        while true {
            let answer = self.events(since: position, limit: limit)
            events += answer.events
            position = answer.activity
            if !answer.hasMore { return HistoryInboxEventBatch(events: events, hasMore: false, activity: position) }
        }
    }
}
