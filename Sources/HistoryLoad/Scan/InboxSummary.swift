/// What the inbox checks need of an inbox page (`{"conversations": [row...],
/// "next_cursor", "activity"}`) or an inbox feed answer (`{"events": [row
/// with "type"...], "has_more", "activity"}`): per row the ids and counters,
/// not the conversation's title or the last message's body.
///
/// A virtual user keeps one and rescans into it, like ``PageSummary``.
struct InboxSummary {
    struct Row: Hashable {
        var conversationID: String
        /// A feed event `{"type":"removed"}`: only the id and `activity` are set.
        var removed = false
        var role: String?
        /// `conversation.newest_id`.
        var newestID: Int64?
        /// `last_message.id`, nil when `last_message` is null.
        var lastMessageID: Int64?
        /// `last_message.client_id`: the load tool's posts carry their send time in it.
        var lastMessageClientID: String?
        var lastReadID: Int64?
        var firstUnreadID: Int64?
        var unreadCount: Int64 = 0
        var unreadCapped = false
        var activity: Int64 = 0
    }

    var rows: [Row] = []
    var nextCursor: String?
    var hasMore = false
    var activity: Int64 = 0

    init() {
        rows.reserveCapacity(64)
    }

    /// Replaces the summary with the inbox page or feed answer in `body`.
    /// - Throws: `ScanError` when the body lacks the list, `activity`, or a row's fields.
    mutating func scan(_ body: [UInt8]) throws(ScanError) {
        rows.removeAll(keepingCapacity: true)
        nextCursor = nil
        hasMore = false
        var summary = self
        defer { self = summary }
        var seen = (list: false, activity: false)
        try body.withUnsafeBufferPointer { (bytes) throws(ScanError) in
            var cursor = JSONCursor(bytes)
            try cursor.forEachMember { key, cursor throws(ScanError) in
                if key.equals("conversations") || key.equals("events") {
                    seen.list = true
                    try cursor.forEachElement { element throws(ScanError) in
                        summary.rows.append(try Self.scanRow(&element, bytes))
                    }
                } else if key.equals("next_cursor") {
                    if let range = try cursor.readOptionalStringRange() {
                        summary.nextCursor = String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
                    }
                } else if key.equals("has_more") {
                    summary.hasMore = try cursor.readBool()
                } else if key.equals("activity") {
                    seen.activity = true
                    summary.activity = try cursor.readInt()
                } else {
                    try cursor.skipValue()
                }
            }
            try cursor.expectEnd()
        }
        if !seen.list { throw ScanError.missingField("conversations") }
        if !seen.activity { throw ScanError.missingField("activity") }
    }

    private static func scanRow(_ element: inout JSONCursor, _ bytes: UnsafeBufferPointer<UInt8>) throws(ScanError) -> Row {
        var row = Row(conversationID: "")
        var seen = (conversation: false, activity: false, unread: false)
        try element.forEachMember { field, value throws(ScanError) in
            if field.equals("conversation") {
                seen.conversation = true
                try value.forEachMember { name, inner throws(ScanError) in
                    if name.equals("id") {
                        row.conversationID = try inner.readString()
                    } else if name.equals("newest_id") {
                        row.newestID = try inner.readOptionalInt()
                    } else {
                        try inner.skipValue()
                    }
                }
            } else if field.equals("conversation_id") {
                seen.conversation = true
                row.conversationID = try value.readString()
            } else if field.equals("type") {
                row.removed = try value.readString() == "removed"
            } else if field.equals("role") {
                row.role = try value.readString()
            } else if field.equals("last_message") {
                value.skipWhitespace()
                if let id = try Self.scanMessage(&value, bytes, clientID: &row.lastMessageClientID) { row.lastMessageID = id }
            } else if field.equals("last_read_id") {
                row.lastReadID = try value.readOptionalInt()
            } else if field.equals("first_unread_id") {
                row.firstUnreadID = try value.readOptionalInt()
            } else if field.equals("unread_count") {
                seen.unread = true
                row.unreadCount = try value.readInt()
            } else if field.equals("unread_capped") {
                row.unreadCapped = try value.readBool()
            } else if field.equals("activity") {
                seen.activity = true
                row.activity = try value.readInt()
            } else {
                try value.skipValue()
            }
        }
        guard seen.conversation, !row.conversationID.isEmpty else { throw ScanError.missingField("conversation.id") }
        guard seen.activity else { throw ScanError.missingField("activity") }
        guard seen.unread || row.removed else { throw ScanError.missingField("unread_count") }
        return row
    }

    /// A message object's id (and `client_id`), or nil for `null`.
    private static func scanMessage(_ value: inout JSONCursor, _ bytes: UnsafeBufferPointer<UInt8>,
                                    clientID: inout String?) throws(ScanError) -> Int64? {
        guard value.index < bytes.count, bytes[value.index] == UInt8(ascii: "{") else {
            try value.skipValue()
            return nil
        }
        var id: Int64?
        try value.forEachMember { name, inner throws(ScanError) in
            if name.equals("id") {
                id = try inner.readInt()
            } else if name.equals("client_id") {
                if let range = try inner.readOptionalStringRange() {
                    clientID = String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
                }
            } else {
                try inner.skipValue()
            }
        }
        guard let id else { throw ScanError.missingField("last_message.id") }
        return id
    }
}

/// What a read-marker PUT answers: `{"last_read_id","first_unread_id","unread_count","unread_capped"}`.
struct ReadStateSummary: Hashable {
    var lastReadID: Int64?
    var firstUnreadID: Int64?
    var unreadCount: Int64
    var unreadCapped: Bool

    init(_ body: [UInt8]) throws(ScanError) {
        var lastReadID: Int64?
        var firstUnreadID: Int64?
        var unreadCount: Int64?
        var unreadCapped: Bool?
        try body.withUnsafeBufferPointer { (bytes) throws(ScanError) in
            var cursor = JSONCursor(bytes)
            try cursor.forEachMember { key, value throws(ScanError) in
                if key.equals("last_read_id") { lastReadID = try value.readOptionalInt() }
                else if key.equals("first_unread_id") { firstUnreadID = try value.readOptionalInt() }
                else if key.equals("unread_count") { unreadCount = try value.readInt() }
                else if key.equals("unread_capped") { unreadCapped = try value.readBool() }
                else { try value.skipValue() }
            }
            try cursor.expectEnd()
        }
        guard let unreadCount, let unreadCapped else { throw ScanError.missingField("unread_count") }
        self.lastReadID = lastReadID
        self.firstUnreadID = firstUnreadID
        self.unreadCount = unreadCount
        self.unreadCapped = unreadCapped
    }
}
