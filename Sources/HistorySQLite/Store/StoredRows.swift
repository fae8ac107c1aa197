import HistoryStore
/// The column lists the store selects, and how a row becomes a value: kept
/// in one place so every query decodes the same columns the same way.
package enum StoredRows {
    /// Columns 0...8 of a message row; its conversation is known to the
    /// caller. `place` rather than `id`: the id is a generated column
    /// (`place`'s low bits), which SQLite would compute for every row of a
    /// page; `messageID(_:)` takes it from the place instead.
    static let messageColumns =
        "place, sender, body, created_at, edited_at, deleted, reply_to, client_id, version"

    /// Columns 0...1 of a page's row: its place and its stored JSON
    /// (`json_tail`, migrations/0008), which is all a page writes of it.
    /// Two columns instead of nine: SQLite's column work, the record and
    /// the escaping were a fifth of a deep page's CPU (docs/performance.md,
    /// "Stored JSON").
    static let pageColumns = "place, json_tail"

    /// A row of `pageColumns` appended to `rows`; false, and nothing
    /// appended, when the row has no stored JSON.
    static func appendStoredTail(_ row: SQLiteRow, to rows: inout MessageRows) -> Bool {
        guard let tail = row.optionalTextBytes(1) else { return false }
        rows.append(id: messageID(row), storedTail: tail)
        return true
    }

    /// Column 0 of `messageColumns`: the message's id, out of its place.
    static func messageID(_ row: SQLiteRow) -> Int64 {
        row.int64(0) & MessagePlace.maximumID
    }

    static func message(_ row: SQLiteRow, in conversation: ConversationID) -> Message {
        Message(
            id: messageID(row),
            conversationID: conversation,
            sender: row.string(1),
            body: row.string(2),
            createdAt: Timestamp(millisecondsSinceEpoch: row.int64(3)),
            editedAt: row.optionalInt64(4).map(Timestamp.init(millisecondsSinceEpoch:)),
            deleted: row.bool(5),
            replyTo: row.optionalInt64(6),
            clientID: row.optionalString(7),
            version: row.int64(8)
        )
    }

    /// Columns 0...8 of a message row appended to `rows`, text copied
    /// straight from SQLite's buffers (no String per column).
    static func append(_ row: SQLiteRow, to rows: inout MessageRows) {
        rows.append(id: messageID(row), sender: row.textBytes(1), body: row.textBytes(2),
                    createdAt: Timestamp(millisecondsSinceEpoch: row.int64(3)),
                    editedAt: row.optionalInt64(4).map(Timestamp.init(millisecondsSinceEpoch:)),
                    deleted: row.bool(5), replyTo: row.optionalInt64(6),
                    clientID: row.optionalTextBytes(7), version: row.int64(8))
    }

    /// Columns 0...7 of a conversation row, `seq` first.
    static let conversationColumns =
        "seq, id, title, created_at, message_count, oldest_id, newest_id, version"

    /// A conversation row with its internal key; nil if the stored id is not
    /// a valid one (it always is: only validated ids are inserted).
    static func conversation(_ row: SQLiteRow) -> (seq: Int64, conversation: Conversation)? {
        guard let id = ConversationID(row.string(1)) else { return nil }
        let conversation = Conversation(
            id: id,
            title: row.optionalString(2),
            createdAt: Timestamp(millisecondsSinceEpoch: row.int64(3)),
            messageCount: row.int64(4),
            oldestID: row.optionalInt64(5),
            newestID: row.optionalInt64(6),
            version: row.int64(7)
        )
        return (row.int64(0), conversation)
    }

    /// Columns 0...2 of a member row; its conversation is known to the caller.
    static let memberColumns = "user_id, role, joined_at"

    /// A member row; nil if the stored role is not one this code knows (the
    /// table's CHECK keeps it from happening), so an unreadable row grants
    /// nothing rather than guessing a role.
    static func member(_ row: SQLiteRow) -> Member? {
        guard let role = MemberRole(rawValue: row.string(1)) else { return nil }
        return Member(userID: UserID(stored: row.string(0)), role: role,
                      joinedAt: Timestamp(millisecondsSinceEpoch: row.int64(2)))
    }
}
