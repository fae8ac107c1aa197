import HistoryPostgres
import HistoryStore
import HistorySQLite

/// Where `DirectSeeder` puts a conversation's messages, chunk by chunk:
/// `begin` with the conversation's size, `append` each chunk (the ids it
/// got, consecutive, for later chunks' replies), then `finish`.
protocol DirectMessageLoader {
    func begin(_ conversation: ConversationID, count: Int) throws(StoreError)
    func append(_ messages: [NewMessage]) throws(StoreError) -> ClosedRange<Int64>
    func finish() throws(StoreError)
}

/// SQLite: each chunk is one transaction of the store's bulk loader.
final class BulkMessageLoader: DirectMessageLoader {
    private let store: SQLiteHistoryStore
    private var conversation: ConversationID?

    init(store: SQLiteHistoryStore) {
        self.store = store
    }

    func begin(_ conversation: ConversationID, count: Int) throws(StoreError) {
        self.conversation = conversation
    }

    func append(_ messages: [NewMessage]) throws(StoreError) -> ClosedRange<Int64> {
        guard let conversation, let ids = try store.bulkAppend(messages, to: conversation) else {
            throw .invalidSetting("messages", reason: "an empty chunk")
        }
        return ids
    }

    func finish() throws(StoreError) {
        conversation = nil
    }
}

/// PostgreSQL: a conversation is one transaction and one COPY, its ids
/// taken as one block at `begin`.
final class CopyMessageLoader: DirectMessageLoader {
    private let copy: PostgresCopyLoad
    private var next: Int64 = 0

    init(copy: PostgresCopyLoad) {
        self.copy = copy
    }

    func begin(_ conversation: ConversationID, count: Int) throws(StoreError) {
        next = try copy.begin(conversation, count: count).lowerBound
    }

    func append(_ messages: [NewMessage]) throws(StoreError) -> ClosedRange<Int64> {
        guard !messages.isEmpty else { throw .invalidSetting("messages", reason: "an empty chunk") }
        try copy.add(messages)
        let ids = next...(next + Int64(messages.count) - 1)
        next = ids.upperBound + 1
        return ids
    }

    func finish() throws(StoreError) {
        try copy.finish()
    }
}
