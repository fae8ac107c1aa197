import HistoryStore

/// Writes the contract's JSON shapes as bytes.
///
/// By hand, because a page is the hot path (docs/performance.md, "The
/// performance goals, measured"): no `JSONEncoder`, no reflection, no
/// intermediate `String`. A page is written from the store's `MessageRows`
/// (text copied from the rows' buffer, never a `String` per body) through a
/// `JSONBuffer`, which checks room once per message instead of once per
/// key. Every key is always present, `null` where a value is absent (the
/// shapes of docs/API.md).
///
/// ```swift
/// let body = JSONWriter.page(page)   // {"messages":[...],"has_older":...}
/// ```
public enum JSONWriter {
    // MARK: - Documents

    public static func message(_ message: Message) -> [UInt8] {
        let bound = messageBound(message)
        var buffer = JSONBuffer(capacity: bound)
        buffer.write(atMost: bound) { writeMessage(message, to: &$0) }
        return buffer.finish()
    }

    public static func conversation(_ conversation: Conversation) -> [UInt8] {
        let bound = conversationBound(conversation)
        var buffer = JSONBuffer(capacity: bound)
        buffer.write(atMost: bound) { writeConversation(conversation, to: &$0) }
        return buffer.finish()
    }

    /// The page as JSON of at most `budget` bytes (docs/API.md, "Limits
    /// that keep one client from hurting the others"): when all its messages
    /// would pass the budget, `trim` says which stay, at least one always
    /// does, and the flags, cursors and `anchor.index` describe the messages
    /// actually written, so paging on the cursors misses nothing.
    public static func page(_ page: Page, budget: Int = .max, trim: PageTrim = .keepNewest) -> [UInt8] {
        let rows = page.rows
        // The conversation id, quoted and escaped once for all the page's
        // messages (callgrind: 50 escaping scans of the same id per page).
        let quotedID = quotedString(rows.conversationID.rawValue)
        return quotedID.withUnsafeBufferPointer { id in
            rows.withText { text in
                // Sized from the text actually present; the room for one
                // worst-case message more means a page grows only when its
                // strings need many escapes.
                var capacity = 16 + pageTailBound
                var largestText = 0
                for record in rows.records {
                    let textCount = record.storedTail?.count
                        ?? record.sender.count + record.body.count + (record.clientID?.count ?? 0)
                    capacity += 240 + id.count + textCount
                    largestText = max(largestText, textCount)
                }
                capacity += messageFixedBound + id.count + ByteCursor.stringBound(largestText)
                if budget < capacity { capacity = budget + messageFixedBound + id.count + ByteCursor.stringBound(largestText) }
                var buffer = JSONBuffer(capacity: capacity)
                buffer.write(atMost: 16) { $0.write(#"{"messages":["#) }
                var elements = BudgetedElements(arrayStart: buffer.byteCount, limit: budget - pageTailBound)
                var dates = RFC3339Dates()
                let records = rows.records
                func bound(_ record: MessageRows.Record) -> Int {
                    if let tail = record.storedTail { return storedMessageBound + id.count + tail.count }
                    return messageFixedBound + id.count
                        + ByteCursor.stringBound(record.sender.count + record.body.count + (record.clientID?.count ?? 0))
                }
                switch trim {
                case .keepNewest:
                    for record in records {
                        elements.appendDroppingFront(to: &buffer, atMost: bound(record)) { cursor in
                            writeRecord(record, text: text, quotedConversationID: id, dates: &dates, to: &cursor)
                        }
                    }
                case .keepOldest:
                    for record in records {
                        let kept = elements.appendUnlessFull(to: &buffer, atMost: bound(record)) { cursor in
                            writeRecord(record, text: text, quotedConversationID: id, dates: &dates, to: &cursor)
                        }
                        if !kept { break }
                    }
                case .keepAnchor:
                    // The older side may fill half the budget, the anchor
                    // always stays, the newer side takes what is left.
                    let anchorID = page.anchor?.id ?? 0
                    let found = page.anchor?.found == true
                    let pivot = records.firstIndex { $0.id >= anchorID } ?? records.count
                    let olderShare = elements.arrayStart + (budget - pageTailBound - elements.arrayStart) / 2
                    for record in records[..<pivot] {
                        elements.appendDroppingFront(to: &buffer, atMost: bound(record), within: olderShare) { cursor in
                            writeRecord(record, text: text, quotedConversationID: id, dates: &dates, to: &cursor)
                        }
                    }
                    for (index, record) in records.enumerated().dropFirst(pivot) {
                        if index == pivot && found {
                            elements.appendDroppingFront(to: &buffer, atMost: bound(record)) { cursor in
                                writeRecord(record, text: text, quotedConversationID: id, dates: &dates, to: &cursor)
                            }
                            continue
                        }
                        let kept = elements.appendUnlessFull(to: &buffer, atMost: bound(record)) { cursor in
                            writeRecord(record, text: text, quotedConversationID: id, dates: &dates, to: &cursor)
                        }
                        if !kept { break }
                    }
                }
                elements.finish(&buffer)
                let kept = records.dropFirst(elements.droppedFront).prefix(elements.keptCount)
                buffer.write(atMost: pageTailBound) { cursor in
                    cursor.write(#"],"has_older":"#)
                    cursor.writeBool(page.hasOlder || elements.droppedFront > 0)
                    cursor.write(#","has_newer":"#)
                    cursor.writeBool(page.hasNewer || elements.stoppedAtBack)
                    writeEdges(oldestID: kept.first?.id, newestID: kept.last?.id, version: page.version, to: &cursor)
                    if let anchor = page.anchor {
                        cursor.write(#","anchor":{"id":"#)
                        cursor.writeOptionalInteger(anchor.id)
                        cursor.write(#","found":"#)
                        cursor.writeBool(anchor.found)
                        cursor.write(#","index":"#)
                        cursor.writeOptionalInteger(anchor.index.map { Int64($0 - elements.droppedFront) })
                        cursor.write(UInt8(ascii: "}"))
                    }
                    if let reset = page.reset {
                        cursor.write(#","reset":"#)
                        cursor.writeBool(reset)
                    }
                    cursor.write(UInt8(ascii: "}"))
                }
                return buffer.finish()
            }
        }
    }

    /// The feed as JSON of at most `budget` bytes: when its events would
    /// pass it, the later ones are left for the next call, `has_more` is
    /// true and `version` is the last written event's, the `since` that
    /// continues exactly there. At least one event is always written.
    public static func changeFeed(_ feed: ChangeFeed, budget: Int = .max) -> [UInt8] {
        eventFeed(feed.events, reset: feed.reset, hasMore: feed.hasMore, counterKey: #","version":"#,
                  counter: feed.version, budget: budget, counterOf: \.version, bound: changeEventBound,
                  write: writeChangeEvent)
    }

    /// One element of a change feed's `events`: a stream's `data`.
    public static func changeEvent(_ event: ChangeEvent) -> [UInt8] {
        var buffer = JSONBuffer(capacity: changeEventBound(event))
        buffer.write(atMost: changeEventBound(event)) { writeChangeEvent(event, to: &$0) }
        return buffer.finish()
    }

    /// Keys, punctuation and type 42, the version 20.
    static func changeEventBound(_ event: ChangeEvent) -> Int { 96 + messageBound(event.message) }

    static func writeChangeEvent(_ event: ChangeEvent, to cursor: inout ByteCursor) {
        cursor.write(#"{"version":"#)
        cursor.writeInteger(event.version)
        cursor.write(#","type":""#)
        switch event.kind {
        case .created: cursor.write("created")
        case .edited: cursor.write("edited")
        case .deleted: cursor.write("deleted")
        }
        cursor.write(#"","message":"#)
        writeMessage(event.message, to: &cursor)
        cursor.write(UInt8(ascii: "}"))
    }

    /// `{"status":"ok"}` for `/healthz`.
    public static let healthy: [UInt8] = Array(#"{"status":"ok"}"#.utf8)

    // MARK: - Pieces for other writers

    /// Decimal digits without `String(describing:)`; `Int64.min` included.
    public static func appendInteger(_ value: Int64, to bytes: inout [UInt8]) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: ByteCursor.integerBound) { digits in
            var cursor = ByteCursor(digits.baseAddress!, room: ByteCursor.integerBound)
            cursor.writeInteger(value)
            bytes.append(contentsOf: UnsafeBufferPointer(start: digits.baseAddress, count: cursor.position - digits.baseAddress!))
        }
    }

    // MARK: - Messages

    /// The most one message writes besides the bytes of its strings (a
    /// leading comma, keys and punctuation 119, three integers, two quoted
    /// times, `false`, a `null`, the quotes of four strings: 246), rounded up.
    static let messageFixedBound = 256 + 4 * ByteCursor.integerBound

    /// The most `writeMessage` writes for `message`.
    static func messageBound(_ message: Message) -> Int {
        messageFixedBound + message.conversationID.rawValue.utf8.count
            + ByteCursor.stringBound(message.sender.utf8.count + message.body.utf8.count
                                     + (message.clientID?.utf8.count ?? 0))
    }

    /// The most a message with a stored tail writes besides the conversation
    /// id and the tail: a leading comma, `{"id":`, the id,
    /// `,"conversation_id":` and the comma before the tail.
    static let storedMessageBound = 32 + ByteCursor.integerBound

    /// The most a page writes after its messages: keys and punctuation 109,
    /// six integers, four booleans, rounded up.
    static let pageTailBound = 192 + 6 * ByteCursor.integerBound + 4 * 5

    /// The most `writeConversation` writes for `conversation`: keys and
    /// punctuation 84, four integers, one quoted time, and its strings.
    static func conversationBound(_ conversation: Conversation) -> Int {
        let title = conversation.title.map { ByteCursor.stringBound($0.utf8.count) } ?? 4
        return 128 + ByteCursor.stringBound(conversation.id.rawValue.utf8.count) + title + 4 * ByteCursor.integerBound + 26
    }

    /// The object of `GET /v1/conversations/{cid}`, also an inbox row's `conversation`.
    static func writeConversation(_ conversation: Conversation, to cursor: inout ByteCursor) {
        cursor.write(#"{"id":"#)
        cursor.writeString(conversation.id.rawValue)
        cursor.write(#","title":"#)
        if let text = conversation.title { cursor.writeString(text) } else { cursor.write("null") }
        cursor.write(#","created_at":"#)
        cursor.writeQuotedTimestamp(conversation.createdAt)
        cursor.write(#","message_count":"#)
        cursor.writeInteger(conversation.messageCount)
        writeEdges(oldestID: conversation.oldestID, newestID: conversation.newestID,
                   version: conversation.version, to: &cursor)
        cursor.write(UInt8(ascii: "}"))
    }

    static func writeMessage(_ message: Message, to cursor: inout ByteCursor) {
        cursor.write(#"{"id":"#)
        cursor.writeInteger(message.id)
        cursor.write(#","conversation_id":"#)
        cursor.writeString(message.conversationID.rawValue)
        cursor.write(#","sender":"#)
        cursor.writeString(message.sender)
        cursor.write(#","body":"#)
        cursor.writeString(message.body)
        var dates = RFC3339Dates()
        writeTail(createdAt: message.createdAt, editedAt: message.editedAt, deleted: message.deleted,
                  replyTo: message.replyTo, dates: &dates, to: &cursor)
        if let clientID = message.clientID { cursor.writeString(clientID) } else { cursor.write("null") }
        cursor.write(#","version":"#)
        cursor.writeInteger(message.version)
        cursor.write(UInt8(ascii: "}"))
    }

    /// The same shape as `writeMessage`, from a stored row and its text.
    /// `quotedConversationID` is the id as `writeString` writes it (`quotedString`).
    static func writeRecord(_ record: MessageRows.Record, text: UnsafeBufferPointer<UInt8>,
                            quotedConversationID: UnsafeBufferPointer<UInt8>, dates: inout RFC3339Dates,
                            to cursor: inout ByteCursor) {
        cursor.write(#"{"id":"#)
        cursor.writeInteger(record.id)
        cursor.write(#","conversation_id":"#)
        cursor.write(raw: quotedConversationID)
        if let tail = record.storedTail {
            // The rest as the store keeps it: the same bytes as below
            // (MessageJSONTail, held to them by StoredJSONIdentityTests).
            cursor.write(UInt8(ascii: ","))
            cursor.write(raw: UnsafeBufferPointer(rebasing: text[tail]))
            return
        }
        cursor.write(#","sender":"#)
        cursor.writeString(UnsafeBufferPointer(rebasing: text[record.sender]))
        cursor.write(#","body":"#)
        cursor.writeString(UnsafeBufferPointer(rebasing: text[record.body]))
        writeTail(createdAt: record.createdAt, editedAt: record.editedAt, deleted: record.deleted,
                  replyTo: record.replyTo, dates: &dates, to: &cursor)
        if let clientID = record.clientID {
            cursor.writeString(UnsafeBufferPointer(rebasing: text[clientID]))
        } else {
            cursor.write("null")
        }
        cursor.write(#","version":"#)
        cursor.writeInteger(record.version)
        cursor.write(UInt8(ascii: "}"))
    }

    /// The JSON string literal of `text`, as `ByteCursor.writeString` writes it.
    static func quotedString(_ text: String) -> [UInt8] {
        let bound = ByteCursor.stringBound(text.utf8.count)
        var buffer = JSONBuffer(capacity: bound)
        buffer.write(atMost: bound) { $0.writeString(text) }
        return buffer.finish()
    }

    /// `,"oldest_id":…,"newest_id":…,"version":…`: a conversation and a
    /// page end alike, so a client reads the cursors the same way from both.
    private static func writeEdges(oldestID: Int64?, newestID: Int64?, version: Int64, to cursor: inout ByteCursor) {
        cursor.write(#","oldest_id":"#)
        cursor.writeOptionalInteger(oldestID)
        cursor.write(#","newest_id":"#)
        cursor.writeOptionalInteger(newestID)
        cursor.write(#","version":"#)
        cursor.writeInteger(version)
    }

    /// From `created_at` up to the value of `client_id`, shared by both message writers.
    @inline(__always)
    private static func writeTail(createdAt: Timestamp, editedAt: Timestamp?, deleted: Bool, replyTo: Int64?,
                                  dates: inout RFC3339Dates, to cursor: inout ByteCursor) {
        cursor.write(#","created_at":"#)
        cursor.writeQuotedTimestamp(createdAt, dates: &dates)
        cursor.write(#","edited_at":"#)
        if let editedAt { cursor.writeQuotedTimestamp(editedAt, dates: &dates) } else { cursor.write("null") }
        cursor.write(#","deleted":"#)
        cursor.writeBool(deleted)
        cursor.write(#","reply_to":"#)
        cursor.writeOptionalInteger(replyTo)
        cursor.write(#","client_id":"#)
    }
}
