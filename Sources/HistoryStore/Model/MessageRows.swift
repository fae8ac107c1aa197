/// The messages of one conversation as the store read them: the fixed-size
/// fields of each row in one array, and every row's text (sender, body,
/// client id) back to back in one byte buffer; or, for a SQLite page, each
/// row's id and its stored JSON (`Record.storedTail`) in that buffer.
///
/// Why not `[Message]`: a page is the hot path, and a `Message` costs a
/// heap-allocated, UTF-8-checked `String` per body plus reference counting
/// on every copy. Reading 50 rows into two flat arrays is two allocations,
/// copying a record moves no reference counts, and the JSON writer copies
/// the text straight from the buffer (the page profile showed String
/// creation, retain/release and `[Message]` copies at about a fifth of the
/// server's user time). `messages` still gives `Message` values to
/// everyone who is not on that path.
///
/// The text is UTF-8 as SQLite stored it; only valid Swift strings are
/// ever inserted, so it is valid UTF-8.
///
/// ```swift
/// rows.withText { text in
///     for record in rows.records { write(text[record.body]) }
/// }
/// ```
public struct MessageRows: Sendable {
    /// One message's fields; its text lives in the owning `MessageRows`.
    public struct Record: Hashable, Sendable {
        public var id: Int64
        public var createdAt: Timestamp
        public var editedAt: Timestamp?
        public var deleted: Bool
        public var replyTo: Int64?
        public var version: Int64
        /// Byte ranges in `withText`'s buffer.
        public var sender: Range<Int>
        public var body: Range<Int>
        public var clientID: Range<Int>?
        /// The message's stored JSON from `"sender"` on (`MessageJSONTail`),
        /// when the store read that instead of the columns: then the
        /// fields above other than `id` are not read, and `message(at:)`
        /// decodes the tail.
        public var storedTail: Range<Int>? = nil
    }

    /// The conversation every record belongs to.
    public let conversationID: ConversationID
    /// Ascending by id wherever the store hands rows out.
    public private(set) var records: [Record] = []
    private var text: [UInt8] = []

    public init(conversationID: ConversationID) {
        self.conversationID = conversationID
    }

    /// Rows holding `messages`, which must all belong to `conversationID`.
    public init(_ messages: [Message], conversationID: ConversationID) {
        self.conversationID = conversationID
        records.reserveCapacity(messages.count)
        for message in messages { append(message) }
    }

    public var count: Int { records.count }
    /// The bytes of every sender, body and client id held, or of the stored
    /// tails that hold them: no more than the JSON they become, which
    /// quotes and escapes them.
    package var textByteCount: Int { text.count }
    public var isEmpty: Bool { records.isEmpty }

    /// The text buffer the records' ranges point into, for the duration of `body`.
    public func withText<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try text.withUnsafeBufferPointer(body)
    }

    /// The record at `index` as a `Message`.
    public func message(at index: Int) -> Message {
        let record = records[index]
        if let tail = record.storedTail {
            // A tail this code did not write (a file edited by other means)
            // has no fields to give: the message is shown empty here, as
            // its bytes are shown as stored on the page path.
            return text.withUnsafeBufferPointer {
                MessageJSONTail.decode(UnsafeBufferPointer(rebasing: $0[tail]), id: record.id, conversationID: conversationID)
            } ?? Message(id: record.id, conversationID: conversationID, sender: "", body: "",
                         createdAt: Timestamp(millisecondsSinceEpoch: 0), editedAt: nil, deleted: false,
                         replyTo: nil, clientID: nil, version: 0)
        }
        return Message(id: record.id, conversationID: conversationID,
                       sender: string(record.sender), body: string(record.body),
                       createdAt: record.createdAt, editedAt: record.editedAt, deleted: record.deleted,
                       replyTo: record.replyTo, clientID: record.clientID.map(string), version: record.version)
    }

    /// Every record as a `Message`, in order.
    public var messages: [Message] {
        records.indices.map(message(at:))
    }

    // MARK: - Building (the store's readers)

    /// Appends a row whose text columns are given as UTF-8 bytes.
    package mutating func append(id: Int64, sender: UnsafeBufferPointer<UInt8>, body: UnsafeBufferPointer<UInt8>,
                         createdAt: Timestamp, editedAt: Timestamp?, deleted: Bool, replyTo: Int64?,
                         clientID: UnsafeBufferPointer<UInt8>?, version: Int64) {
        records.append(Record(id: id, createdAt: createdAt, editedAt: editedAt, deleted: deleted,
                              replyTo: replyTo, version: version,
                              sender: store(sender), body: store(body), clientID: clientID.map { store($0) }))
    }

    /// Appends a row read as its id and stored tail only (`MessageJSONTail`).
    package mutating func append(id: Int64, storedTail: UnsafeBufferPointer<UInt8>) {
        records.append(Record(id: id, createdAt: Timestamp(millisecondsSinceEpoch: 0), editedAt: nil, deleted: false,
                              replyTo: nil, version: 0, sender: 0..<0, body: 0..<0, clientID: nil,
                              storedTail: store(storedTail)))
    }

    /// Appends `other`'s record at `index` (same conversation), text included.
    package mutating func append(_ other: MessageRows, at index: Int) {
        var record = other.records[index]
        other.withText { source in
            record.sender = store(UnsafeBufferPointer(rebasing: source[record.sender]))
            record.body = store(UnsafeBufferPointer(rebasing: source[record.body]))
            record.clientID = record.clientID.map { store(UnsafeBufferPointer(rebasing: source[$0])) }
            record.storedTail = record.storedTail.map { store(UnsafeBufferPointer(rebasing: source[$0])) }
        }
        records.append(record)
    }

    package mutating func append(_ message: Message) {
        records.append(Record(id: message.id, createdAt: message.createdAt, editedAt: message.editedAt,
                              deleted: message.deleted, replyTo: message.replyTo, version: message.version,
                              sender: store(message.sender), body: store(message.body),
                              clientID: message.clientID.map { store($0) }))
    }

    /// Reverses the order of the records (the text stays where it is).
    package mutating func reverse() {
        records.reverse()
    }

    package mutating func removeLast() {
        records.removeLast()
    }

    /// Room for `count` records and their text at a typical size (a
    /// message of a few hundred bytes), so a page's buffer is not regrown
    /// a dozen times while it fills.
    package mutating func reserveCapacity(_ count: Int) {
        records.reserveCapacity(count)
        text.reserveCapacity(count * Self.typicalTextBytes)
    }

    private static let typicalTextBytes = 256

    // MARK: - Private

    private mutating func store(_ bytes: UnsafeBufferPointer<UInt8>) -> Range<Int> {
        let start = text.count
        text.append(contentsOf: bytes)
        return start..<text.count
    }

    private mutating func store(_ string: String) -> Range<Int> {
        let start = text.count
        text.append(contentsOf: string.utf8)
        return start..<text.count
    }

    private func string(_ range: Range<Int>) -> String {
        text.withUnsafeBufferPointer { String(decoding: UnsafeBufferPointer(rebasing: $0[range]), as: UTF8.self) }
    }
}

/// Equal when they hold the same messages, however the text is laid out.
extension MessageRows: Hashable {
    public static func == (lhs: MessageRows, rhs: MessageRows) -> Bool {
        lhs.conversationID == rhs.conversationID && lhs.messages == rhs.messages
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(conversationID)
        hasher.combine(messages)
    }
}
