import Foundation
import HistoryClient

/// A simple model of one conversation: an array of messages mutated in
/// place, with the contract's page and event semantics computed from it by
/// brute force. It stands in for the server in MessageWindow's tests.
struct SimulatedConversation {
    let id = "sim"
    /// Ascending by id; tombstones keep their place.
    private(set) var messages: [HistoryMessage] = []
    private(set) var version: Int64 = 0
    /// The version at which each message was appended (for `created` vs `edited`).
    private var createdVersion: [Int64: Int64] = [:]
    /// Every state each message ever had, to check a row is a real one.
    private(set) var history: [Int64: [HistoryMessage]] = [:]
    private var lastID: Int64 = 0
    /// The message each `client_id` stored.
    private(set) var storedClientIDs: [String: Int64] = [:]

    var ids: [Int64] { messages.map(\.id) }
    var newestID: Int64? { messages.last?.id }

    /// Ids are unique across a server, so they have gaps within one conversation.
    /// A post with a `client_id` already stored answers the stored message, as the server does.
    @discardableResult
    mutating func post(body: String = "hello", idGap: Int64 = 1, sender: String = "ana",
                       clientID: String? = nil) -> HistoryMessage {
        if let clientID, let stored = storedClientIDs[clientID], let message = message(stored) {
            return message
        }
        version += 1
        lastID += max(1, idGap)
        var message = HistoryMessage(id: lastID, conversationID: id, sender: sender, body: body,
                                     createdAt: Date(timeIntervalSince1970: Double(lastID)), version: version)
        message.clientID = clientID
        if let clientID { storedClientIDs[clientID] = lastID }
        messages.append(message)
        createdVersion[lastID] = version
        history[lastID, default: []].append(message)
        return message
    }

    /// Nil for a tombstone (the server answers 409 message_deleted).
    @discardableResult
    mutating func edit(_ messageID: Int64, body: String) -> HistoryMessage? {
        guard let index = index(of: messageID), !messages[index].deleted else { return nil }
        version += 1
        messages[index].body = body
        messages[index].editedAt = Date(timeIntervalSince1970: Double(version))
        messages[index].version = version
        history[messageID, default: []].append(messages[index])
        return messages[index]
    }

    /// Deleting a tombstone changes nothing.
    @discardableResult
    mutating func delete(_ messageID: Int64) -> HistoryMessage? {
        guard let index = index(of: messageID) else { return nil }
        guard !messages[index].deleted else { return messages[index] }
        version += 1
        messages[index].body = ""
        messages[index].deleted = true
        messages[index].version = version
        history[messageID, default: []].append(messages[index])
        return messages[index]
    }

    func message(_ messageID: Int64) -> HistoryMessage? {
        index(of: messageID).map { messages[$0] }
    }

    func index(of messageID: Int64) -> Int? {
        messages.firstIndex { $0.id == messageID }
    }

    // MARK: - The contract's reads

    func page(_ request: WindowRequest) -> HistoryPage {
        page(request.pageRequest)
    }

    func page(_ request: PageRequest) -> HistoryPage {
        let limit = request.limit ?? 50
        switch request.cursor {
        case .newest:
            return slice(messages.indices.suffix(limit))
        case .before(let cursor):
            let below = messages.indices.filter { messages[$0].id < cursor }
            return slice(below.suffix(limit))
        case .after(let cursor):
            let above = messages.indices.filter { messages[$0].id > cursor }
            if let window = request.window {
                if above.count > window {
                    var page = slice(messages.indices.suffix(limit))
                    page.reset = true
                    return page
                }
                var page = slice(Array(above.prefix(limit)))
                page.reset = false
                return page
            }
            return slice(Array(above.prefix(limit)))
        case .between(let after, let before):
            let inside = messages.indices.filter { messages[$0].id > after && messages[$0].id < before }
            let chosen = Array(inside.prefix(limit))
            var page = slice(chosen)
            page.hasOlder = (chosen.first ?? inside.endIndex) > (inside.first ?? 0)
            page.hasNewer = (chosen.last.map { $0 + 1 } ?? 0) < (inside.last.map { $0 + 1 } ?? 0)
            return page
        case .aroundTime(let time):
            guard let first = messages.first(where: { $0.createdAt >= time }) else {
                var page = slice(messages.indices.suffix(limit))
                page.anchor = HistoryPage.Anchor(id: nil, found: false, index: nil)
                return page
            }
            return self.page(PageRequest(cursor: .around(first.id), limit: request.limit))
        case .around(let anchor):
            let older = messages.indices.filter { messages[$0].id < anchor }
            let rest = messages.indices.filter { messages[$0].id >= anchor }
            var olderCount = min(limit / 2, older.count)
            let newerCount = min(limit - olderCount, rest.count)
            olderCount = min(limit - newerCount, older.count)
            let chosen = Array(older.suffix(olderCount)) + Array(rest.prefix(newerCount))
            var page = slice(chosen)
            let index = page.messages.firstIndex { $0.id == anchor }
            page.anchor = HistoryPage.Anchor(id: anchor, found: index != nil, index: index)
            return page
        }
    }

    /// has_older / has_newer over the whole conversation, exact.
    private func slice<S: Sequence>(_ indices: S) -> HistoryPage where S.Element == Int {
        let chosen = Array(indices)
        let rows = chosen.map { messages[$0] }
        let hasOlder = (chosen.first ?? 0) > 0
        let hasNewer = (chosen.last ?? messages.count) < messages.count - 1
        return HistoryPage(messages: rows, hasOlder: hasOlder && !rows.isEmpty,
                           hasNewer: hasNewer && !rows.isEmpty, version: version)
    }

    /// Compacted: every message changed after `since` once, ordered by its last change.
    func events(since: Int64, limit: Int = 100, minID: Int64? = nil, maxID: Int64? = nil) -> HistoryEventBatch {
        let changed = messages
            .filter { $0.version > since && $0.id >= (minID ?? .min) && $0.id <= (maxID ?? .max) }
            .sorted { $0.version < $1.version }
        let chosen = changed.prefix(limit)
        let events = chosen.map { message in
            let kind: HistoryEvent.Kind = (createdVersion[message.id] ?? 0) > since ? .created
                : message.deleted ? .deleted : .edited
            return HistoryEvent(version: message.version, kind: kind, message: message)
        }
        let hasMore = changed.count > limit
        return HistoryEventBatch(events: events, hasMore: hasMore,
                                 version: hasMore ? (events.last?.version ?? since) : version)
    }

    /// A has_more chain joined, as ``HistoryEventBatchStream`` yields it.
    func coalescedEvents(since: Int64, limit: Int) -> HistoryEventBatch {
        var events: [HistoryEvent] = []
        var position = since
        while true {
            let answer = self.events(since: position, limit: limit)
            events += answer.events
            position = answer.version
            if !answer.hasMore { return HistoryEventBatch(events: events, hasMore: false, version: position) }
        }
    }
}
