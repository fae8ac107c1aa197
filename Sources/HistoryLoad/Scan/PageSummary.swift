/// What the checks need of a page response: its ids and flags, not its messages.
///
/// A virtual user keeps one and rescans into it, so the id buffer is
/// allocated once per user, not once per request.
struct PageSummary {
    var ids: [Int64] = []
    /// Filled only when scanning with `wantClientIDs` (the read-back of acked posts).
    var clientIDs: [String?] = []
    /// Filled only when scanning with `unreadOf`: per message, whether it
    /// counts as unread for that user (not deleted, not sent by the user).
    var countsAsUnread: [Bool] = []
    var hasOlder = false
    var hasNewer = false
    var oldestID: Int64?
    var newestID: Int64?
    var version: Int64 = 0
    /// Present only on `around` pages.
    var anchor: Anchor?
    /// Present only when the request carried `window`.
    var reset: Bool?

    struct Anchor: Hashable {
        var id: Int64
        var found: Bool
        var index: Int?
    }

    init() {
        ids.reserveCapacity(200)
    }

    /// Replaces the summary with the page in `body`.
    /// - Throws: `ScanError` when the body is not a page of the contract's shape.
    /// - Parameter unreadOf: a user id: fill ``countsAsUnread`` for that user.
    mutating func scan(_ body: [UInt8], wantClientIDs: Bool = false, unreadOf user: [UInt8]? = nil) throws(ScanError) {
        ids.removeAll(keepingCapacity: true)
        clientIDs.removeAll(keepingCapacity: true)
        countsAsUnread.removeAll(keepingCapacity: true)
        anchor = nil
        reset = nil
        var seen = (messages: false, hasOlder: false, hasNewer: false, version: false)
        var summary = self
        defer { self = summary }
        try body.withUnsafeBufferPointer { (bytes) throws(ScanError) in
            var cursor = JSONCursor(bytes)
            try cursor.forEachMember { key, cursor throws(ScanError) in
                if key.equals("messages") {
                    seen.messages = true
                    try cursor.forEachElement { element throws(ScanError) in
                        var id: Int64?
                        var clientID: String?
                        var deleted = false
                        var ownMessage = false
                        try element.forEachMember { field, value throws(ScanError) in
                            if field.equals("id") {
                                id = try value.readInt()
                            } else if user != nil, field.equals("deleted") {
                                deleted = try value.readBool()
                            } else if let user, field.equals("sender") {
                                if let range = try value.readOptionalStringRange() {
                                    ownMessage = range.count == user.count && zip(bytes[range], user).allSatisfy { $0 == $1 }
                                }
                            } else if wantClientIDs, field.equals("client_id") {
                                if let range = try value.readOptionalStringRange() {
                                    clientID = String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
                                }
                            } else {
                                try value.skipValue()
                            }
                        }
                        guard let id else { throw ScanError.missingField("messages[].id") }
                        summary.ids.append(id)
                        if wantClientIDs { summary.clientIDs.append(clientID) }
                        if user != nil { summary.countsAsUnread.append(!deleted && !ownMessage) }
                    }
                } else if key.equals("has_older") {
                    seen.hasOlder = true
                    summary.hasOlder = try cursor.readBool()
                } else if key.equals("has_newer") {
                    seen.hasNewer = true
                    summary.hasNewer = try cursor.readBool()
                } else if key.equals("oldest_id") {
                    summary.oldestID = try cursor.readOptionalInt()
                } else if key.equals("newest_id") {
                    summary.newestID = try cursor.readOptionalInt()
                } else if key.equals("version") {
                    seen.version = true
                    summary.version = try cursor.readInt()
                } else if key.equals("reset") {
                    summary.reset = try cursor.readBool()
                } else if key.equals("anchor") {
                    var anchor = Anchor(id: 0, found: false, index: nil)
                    try cursor.forEachMember { field, value throws(ScanError) in
                        if field.equals("id") { anchor.id = try value.readInt() }
                        else if field.equals("found") { anchor.found = try value.readBool() }
                        else if field.equals("index") { anchor.index = try value.readOptionalInt().map(Int.init) }
                        else { try value.skipValue() }
                    }
                    summary.anchor = anchor
                } else {
                    try cursor.skipValue()
                }
            }
            try cursor.expectEnd()
        }
        if !seen.messages { throw ScanError.missingField("messages") }
        if !seen.hasOlder { throw ScanError.missingField("has_older") }
        if !seen.hasNewer { throw ScanError.missingField("has_newer") }
        if !seen.version { throw ScanError.missingField("version") }
    }
}
